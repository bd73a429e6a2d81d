"""The derivative-free search for numpy black boxes: optuna studies over neighbouring pairs.

A black box ``sample(rng, database, m)`` (numpy code, another library's mechanism) has no
gradient and no known output law, so :func:`~rdpjax.search.find_pair` searches its pairs with a
derivative-free optimizer (optuna's TPE sampler, Bergstra et al., NeurIPS 2011; or uniform random
search as a baseline) over the free parameters of :mod:`rdpjax.search.neighbours`:

* **trials** — restart r is one optuna study seeded from the key (``SearchKeys.init``); its
  first trial is the relation's analogue of the pair (21) (:func:`~rdpjax.search.neighbours.
  reference_params`), so the candidates always include it. Each trial is scored by the plug-in
  ``D̂_λ`` of eq. (14)–(16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3
  (:func:`rdpjax.stream.streamed_bound`'s ``estimate`` on a :class:`~rdpjax.stream.BlackBox`) on
  ``search_n`` draws per side, with *common random numbers*: every trial of restart r draws from the
  same key, so the score is a deterministic function of the pair when the black box consumes its
  Generator the same way on every database. optuna maximizes the mean over the orders of ``D̂_λ /
  λ`` (for a Gaussian mechanism ``D_λ / λ`` does not depend on λ: no order dominates);
* **candidates** — the ``top`` best trials of every restart and their variants (nearest vertex
  of the box; the other entries all at the low, or all at the high, end of the domain:
  :data:`~rdpjax.search.CANDIDATES`), each scored at every order on ``select_n`` *independent*
  selection draws (one key for all candidates), and the pair whose worst order comes closest to
  that order's best candidate is kept (as the JAX search does).

The caller (:func:`~rdpjax.search.find_pair`) then certifies that pair on fresh draws
(:func:`~rdpjax.search.certify`). Cost: ``restarts × trials`` bounds on ``search_n`` draws per
side (plus a pilot of as many), then at most ``4 × top × restarts`` on ``select_n``; the
optimizer's own cost is small next to the draws (TPE: O(trials) per trial).
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections.abc import Callable

import jax
import numpy as np

from rdpjax.search.certification import SearchKeys
from rdpjax.search.config import BlackBoxOptions, Budget
from rdpjax.search.neighbours import pair, reference_params, variants
from rdpjax.search.optimize import CANDIDATES, select_candidate
from rdpjax.search.space import SearchSpace
from rdpjax.stream import BlackBox, streamed_bound

__all__ = ["SAMPLERS", "BlackBoxRun", "optuna_module", "search_black_box"]

SAMPLERS = ("tpe", "random")
"""The optuna samplers of the black-box search (``method``): TPE, and random search (a baseline)."""

_INSTALL = "pip install 'rdpjax[search]' (or: pip install optuna)"


@dataclasses.dataclass(frozen=True)
class BlackBoxRun:
    """What :func:`search_black_box` found, before certification.

    Attributes:
      x, x_prime, index: the chosen pair (:func:`~rdpjax.search.neighbours.pair`).
      values: ``(L,)`` its plug-in estimates on the selection draws.
      trace: ``(L, restarts, trials)`` plug-in estimate of every trial (search draws).
      candidate: which of :data:`~rdpjax.search.CANDIDATES` it is.
      reason: the sampler used, for the report.
    """

    x: np.ndarray
    x_prime: np.ndarray
    index: int
    values: np.ndarray
    trace: np.ndarray
    candidate: str
    reason: str


def optuna_module():
    """``optuna``, or a ``ModuleNotFoundError`` that says how to install it."""
    try:
        import optuna
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            f"the black-box pair search needs optuna, which is not installed: {_INSTALL}"
        ) from err
    return optuna


def _sampler(optuna, method: str, seed: int):
    if method == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    with warnings.catch_warnings():  # multivariate TPE is "experimental" in some releases
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)


def _suggest(trial, space: SearchSpace, neighbours: str) -> dict:
    """The free parameters of one pair, drawn by the optuna trial (levels as integer indices)."""

    def value(name):
        if space.levels is None:
            return trial.suggest_float(name, space.low, space.high)
        step = space.width / (space.levels - 1)
        return space.low + step * trial.suggest_int(name, 0, space.levels - 1)

    params = {"base": np.array([value(f"x{i}") for i in range(space.m)])}
    params["j"] = trial.suggest_categorical("j", list(range(space.m)))
    if neighbours == "replace-one":
        params["b"] = value("b")
    else:
        params["add"] = trial.suggest_categorical("add", [False, True])
    return params


def _as_trial(params: dict, space: SearchSpace) -> dict:
    """The inverse of :func:`_suggest`: a pair's parameters as optuna's named values."""

    def coded(v):
        if space.levels is None:
            return float(v)
        return int(round((float(v) - space.low) / (space.width / (space.levels - 1))))

    out = {f"x{i}": coded(v) for i, v in enumerate(params["base"])}
    out["j"] = int(params["j"])
    out.update({"b": coded(params["b"])} if "b" in params else {"add": bool(params["add"])})
    return out


def _estimates(sample, key, x, x_prime, orders, n: int, options: BlackBoxOptions) -> np.ndarray:
    """Plug-in ``D̂_λ`` at every order from ``n`` draws per side (pilot of as many).

    The warnings of these throw-away bounds (clamped outputs, …) are not the user's concern.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bound = streamed_bound(
            key, BlackBox(sample, x, x_prime), orders, n=n, options=options.bound,
            stream=options.with_pilot(n),
        )  # fmt: skip
    return np.asarray(bound.estimate, np.float64).reshape(-1)


def _bar(total: int, progress: bool | None):
    """A tqdm bar on stderr: ``None`` shows it once the search has taken 2 s."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc="pair search",
        unit="trial",
        delay=2.0 if progress is None else 0.0,
        disable=progress is False,
        file=sys.stderr,
        leave=False,
    )


def search_black_box(
    sample: Callable,
    orders: np.ndarray,
    *,
    keys: SearchKeys,
    space: SearchSpace,
    neighbours: str,
    budget: Budget,
    progress: bool | None,
    options: BlackBoxOptions,
) -> BlackBoxRun:
    """Run the optuna studies and the selection (module docstring).

    The arguments are checked by the caller (:func:`~rdpjax.search.find_pair`).

    Args:
      sample: the numpy black box ``sample(rng, database, m)``.
      orders: ``(L,)`` the orders λ > 1.
      keys: the :class:`~rdpjax.search.SearchKeys` of the search; ``keys.certify`` is not used
        here.
      space: the databases searched (scalar entries, :func:`~rdpjax.search.neighbours.
        black_box_space`).
      neighbours: the relation, one of :data:`~rdpjax.search.neighbours.NEIGHBOURS`.
      budget: the search's sizes with its defaults resolved: ``restarts``, ``trials``, ``top``,
        ``search_n``, ``select_n`` set and ``method`` one of :data:`SAMPLERS`.
      progress: a tqdm bar on stderr over the trials (``None``: once the search has taken 2 s).
      options: the bound's :class:`~rdpjax.search.config.BlackBoxOptions`.

    Returns:
      The pair chosen and the search's record, as a :class:`BlackBoxRun`.
    """
    restarts, trials, method = budget.restarts, budget.trials, budget.method
    search_n, select_n, top = budget.search_n, budget.select_n, budget.top
    optuna = optuna_module()
    per_restart = jax.random.split(keys.search, restarts)
    seeds = np.asarray(jax.random.randint(keys.init, (restarts,), 0, 2**31 - 1)).tolist()
    trace = np.full((orders.size, restarts, trials), np.nan)
    chosen: list[tuple[str, dict]] = []
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no line per trial
    bar = _bar(restarts * trials, progress)
    try:
        for r in range(restarts):
            study = optuna.create_study(
                direction="maximize", sampler=_sampler(optuna, method, int(seeds[r]))
            )
            study.enqueue_trial(_as_trial(reference_params(space, neighbours), space))
            scored = []
            for t in range(trials):
                trial = study.ask()
                params = _suggest(trial, space, neighbours)
                x, x_prime, _ = pair(params, space, neighbours)
                est = _estimates(sample, per_restart[r], x, x_prime, orders, search_n, options)
                trace[:, r, t] = est
                value = float(np.mean(est / orders))
                if np.isfinite(value):
                    study.tell(trial, value)
                    scored.append((value, t, params))
                else:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                bar.update()
            scored.sort(key=lambda s: (-s[0], s[1]))
            for _, _, params in scored[:top]:
                chosen.extend(zip(CANDIDATES, variants(params, space, neighbours), strict=True))
    finally:
        bar.close()
        optuna.logging.set_verbosity(verbosity)
    if not chosen:
        raise ValueError("every trial of the black-box search gave a non-finite estimate")

    pairs, labels, seen = [], [], set()
    for label, params in chosen:  # the same pair once (variants of different trials coincide)
        x, x_prime, j = pair(params, space, neighbours)
        tag = (x.tobytes(), x_prime.tobytes())
        if tag not in seen:
            seen.add(tag)
            pairs.append((x, x_prime, j))
            labels.append(label)
    values = np.stack(
        [_estimates(sample, keys.select, x, xp, orders, select_n, options) for x, xp, _ in pairs]
    )
    identical = np.array([np.array_equal(x, xp) for x, xp, _ in pairs])
    best = select_candidate(np.where(identical[:, None] & ~identical.all(), -np.inf, values))
    x, x_prime, j = pairs[best]
    sampler = "TPESampler" if method == "tpe" else "RandomSampler (a baseline)"
    reason = (
        f"numpy black box: derivative-free search, optuna {optuna.__version__} {sampler} "
        "seeded from the key"
    )
    return BlackBoxRun(
        x=x,
        x_prime=x_prime,
        index=int(j),
        values=values[best],
        trace=trace,
        candidate=labels[best],
        reason=reason,
    )
