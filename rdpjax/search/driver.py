"""The public driver :func:`find_pair` and its result, :class:`SearchResult`.

:func:`find_pair` fixes the objectives by a pilot (:mod:`rdpjax.search.objective`), runs the
vmapped searches and the evaluation of their candidates on the selection draws
(:mod:`rdpjax.search.optimize`), picks one pair for all orders, and certifies it on fresh draws
(:mod:`rdpjax.search.certification`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rdpjax._precision import float64
from rdpjax._pytree import pytree_dataclass
from rdpjax._validation import check_int, check_orders
from rdpjax.mechanisms.base import Mechanism
from rdpjax.search.certification import certify, search_keys
from rdpjax.search.objective import build_objective
from rdpjax.search.optimize import (
    CANDIDATES,
    METHODS,
    choose_method,
    search_fn,
    select_candidate,
)
from rdpjax.search.space import SearchSpace, resolve_space

__all__ = ["SearchResult", "find_pair"]


@pytree_dataclass(
    static=(
        "method",
        "reason",
        "candidate",
        "n",
        "search_n",
        "select_n",
        "steps",
        "restarts",
        "both_directions",
        "name",
    )
)
class SearchResult:
    """The pair found and its certified bounds. A pytree of numpy arrays.

    Attributes:
      lam: ``(L,)`` orders.
      x, x_prime: ``(m,)`` or ``(m, d)``: the pair found (adjacent: one entry differs).
      index: the entry in which they differ.
      lower: ``(L,)`` certified lower bounds on ε(λ) (fresh draws; simultaneous at 1 − alpha).
      estimate, std_error, bias: ``(L,)`` of the certified :class:`rdpjax.Bound`.
      direction: ``(L,)`` 0 for ``D_λ(p_x‖p_x')``, 1 where the reverse bound was larger
        (``both_directions`` only).
      level: the level of each single bound, ``alpha / (L · directions)``.
      alpha: the family-wise error level.
      search_value: ``(L,)`` objective at the pair found, on the selection draws.
      trace: ``(L, restarts, steps)`` objective per step of every restart (search draws).
      method: ``"gradient"`` or ``"evolutionary"``.
      reason: why that method was used.
      candidate: which candidate made from a restart's final pair was chosen (one of
        :data:`CANDIDATES`: the pair itself, its nearest vertex of the box, or the pair with
        all other entries at the low or the high end of the domain).
      n, search_n, select_n: certification, search and selection draws per side.
      steps, restarts: of the search.
      both_directions: whether both directions were certified.
      name: the mechanism's name.
    """

    lam: np.ndarray
    x: np.ndarray
    x_prime: np.ndarray
    index: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    bias: np.ndarray
    direction: np.ndarray
    level: np.ndarray
    alpha: np.ndarray
    search_value: np.ndarray
    trace: np.ndarray
    method: str
    reason: str
    candidate: str
    n: int
    search_n: int
    select_n: int
    steps: int
    restarts: int
    both_directions: bool
    name: str

    def to_dict(self) -> dict:
        """Plain Python values (JSON-ready), same field names."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = np.asarray(v).tolist() if isinstance(v, np.ndarray) else v
        return out

    def __str__(self) -> str:
        lines = [
            f"pair search for {self.name}: {self.method} search ({self.reason}); "
            f"{self.restarts} restarts × {self.steps} steps, {self.search_n:,} draws per side; "
            f"chosen candidate: {self.candidate}"
        ]
        j = int(self.index)
        rest = np.delete(np.asarray(self.x), j, axis=0)
        lines.append(
            f"pair: entry {j} is {_fmt(self.x[j])} in x and {_fmt(self.x_prime[j])} in x'; "
            f"the other entries {_fmt(rest)}"
        )
        lines.append(f"{'lambda':>8} {'lower':>10} {'estimate':>10} {'std_error':>10}")
        for i, lam in enumerate(self.lam):
            arrow = "  D(x'||x)" if int(self.direction[i]) else ""
            lines.append(
                f"{lam:8g} {self.lower[i]:10.6f} {self.estimate[i]:10.6f} "
                f"{self.std_error[i]:10.6f}{arrow}"
            )
        conf = f"{1 - float(self.alpha):.3g}"
        k = len(self.lam) * (2 if self.both_directions else 1)
        lines.append(
            f"certified on {self.n:,} fresh draws per side: simultaneous {conf} "
            f"(Bonferroni over {k} bound{'s' if k > 1 else ''}, each at {float(self.level):.4g})"
        )
        return "\n".join(lines)


def _fmt(values) -> str:
    arr = np.round(np.asarray(values, np.float64), 3)
    if arr.size == 0:
        return "—"
    if arr.ndim == 0:
        return f"{float(arr):g}"
    return np.array2string(arr, separator=", ", threshold=12)


def find_pair(
    mechanism: Mechanism,
    lam: float | Sequence[float],
    *,
    key: jax.Array,
    m: int | None = None,
    domain: tuple[float, float] | None = None,
    levels: int | None = None,
    space: SearchSpace | None = None,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 100,
    restarts: int = 8,
    n: int = 100_000,
    search_n: int | None = None,
    select_n: int | None = None,
    population: int = 8,
    alpha: float = 0.05,
    both_directions: bool = False,
    method: str = "auto",
) -> SearchResult:
    """Search the adjacent pair with the largest estimated ``D_λ``, then certify its bound.

    For each order, ``restarts`` searches (vmapped) maximize the plug-in estimate on common
    random numbers (see :mod:`rdpjax.search`), one pair is picked for all orders on independent
    selection draws (among the restarts' final pairs and their variants, :data:`CANDIDATES`),
    and it is certified with :func:`rdpjax.lower_bound` on ``n`` fresh draws per
    side from a key the search never used, at level ``alpha / (L · directions)``.

    Args:
      mechanism: a mechanism of :mod:`rdpjax.mechanisms` (or :func:`~rdpjax.mechanisms.
        from_sampler`) taking databases of shape ``(m,)`` or ``(m, d)``.
      lam: one order λ > 1 or several; each gets its own restarts, one pair is certified.
      key: PRNG key; split as :class:`~rdpjax.search.SearchKeys` describes.
      m: number of entries; default from :func:`~rdpjax.search.search_space` (10 for paper
        000).
      domain: ``(low, high)`` of every entry; default from
        :func:`~rdpjax.search.search_space` ((0, 1)).
      levels: restrict entries to this many equally spaced values (2: bits).
      space: a whole :class:`SearchSpace` (e.g. rows in ``[0, 1]^d``: ``row=(d,)``) instead of
        :func:`~rdpjax.search.search_space`'s; ``m``, ``domain`` and ``levels`` still override
        it.
      optimizer: any optax transformation for the gradient search; default Adam with a
        cosine-decayed step of 5% of the domain width. Its updates are followed by the
        projection onto the domain (``optax.projections.projection_box``).
      steps: search steps per restart (static).
      restarts: independent restarts per order (vmapped; restart r of the gradient search
        changes entry ``r mod m``).
      n: certification draws per side.
      search_n: draws per side of the search objective; default ``min(n, 4096)``.
      select_n: draws per side of the selection among candidates (the same draws for every
        candidate); default ``min(n, 4 · search_n)``.
      population: proposals per step of the evolutionary search.
      alpha: family-wise error level in (0, 0.5) of all reported bounds.
      both_directions: certify ``D_λ`` in both directions of the pair found and keep the larger
        (2L bounds). The search already covers both orders of a pair (x and x' are both free).
      method: ``"auto"``, ``"gradient"`` or ``"evolutionary"``. Auto uses the gradient for
        continuous outputs of a continuous domain when the gradient at the start is finite and
        non-zero, the evolutionary search otherwise; the result says which and why.

    Returns:
      A :class:`SearchResult`.

    Raises:
      ValueError: on invalid arguments, a mechanism whose adjacency is not "one entry differs"
        (:func:`~rdpjax.search.search_space`), ``method="gradient"`` with discrete outputs, or
        anything :func:`rdpjax.lower_bound` rejects.

    Example:
      >>> import jax, rdpjax
      >>> from rdpjax.search import find_pair
      >>> mech = rdpjax.mechanisms.Gaussian(5.0)
      >>> res = find_pair(mech, 2.0, key=jax.random.key(0), steps=20, restarts=2, n=20_000)
      >>> res.method
      'gradient'
    """
    orders = check_orders(lam)
    for name, value, least in (
        ("steps", steps, 1),
        ("restarts", restarts, 1),
        ("n", n, 2),
        ("population", population, 1),
    ):
        check_int(value, name, least)
    search_n = min(n, 4096) if search_n is None else search_n
    check_int(search_n, "search_n", 2)
    select_n = min(n, 4 * search_n) if select_n is None else select_n
    check_int(select_n, "select_n", 2)
    if not 0 < float(alpha) < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5); got {alpha!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    space = resolve_space(mechanism, space, m, domain, levels)
    keys = search_keys(key)
    n_orders = orders.size

    with float64():
        discrete = mechanism.output(jnp.full(space.shape, space.snap(space.low))).is_discrete
        chosen, reason = choose_method(method, discrete, space)
        per_restart = jax.random.split(keys.search, restarts + 1)
        objective = build_objective(mechanism, space, per_restart[:restarts], search_n)
        selection = build_objective(mechanism, space, per_restart[:restarts], select_n)
        inputs = (keys.init, per_restart, keys.select)
        run = search_fn(chosen, objective, selection, space, orders, steps, population, optimizer)
        xs, xs_prime, final_j, trace, values, moved = jax.device_get(run(*inputs))
        if chosen == "gradient" and method == "auto" and not np.any(moved):
            chosen = "evolutionary"
            reason = "the autodiff gradient was zero throughout (non-differentiable sampler)"
            run = search_fn(
                chosen, objective, selection, space, orders, steps, population, optimizer
            )
            xs, xs_prime, final_j, trace, values, moved = jax.device_get(run(*inputs))
        trace = np.asarray(trace).reshape(n_orders, restarts, steps)

    identical = np.all(xs == xs_prime, axis=tuple(range(1, xs.ndim)))
    best = select_candidate(np.where(identical[:, None] & ~np.all(identical), -np.inf, values))
    candidate = CANDIDATES[best // (n_orders * restarts)]
    bound = certify(
        mechanism,
        xs[best],
        xs_prime[best],
        orders,
        key=keys.certify,
        n=n,
        alpha=alpha,
        both_directions=both_directions,
    )
    return SearchResult(
        lam=orders,
        x=xs[best],
        x_prime=xs_prime[best],
        index=np.asarray(final_j[best], np.int64),
        lower=np.asarray(bound.lower),
        estimate=np.asarray(bound.estimate),
        std_error=np.asarray(bound.std_error),
        bias=np.asarray(bound.bias),
        direction=np.asarray(bound.direction),
        level=np.asarray(bound.level),
        alpha=np.asarray(float(alpha)),
        search_value=values[best],
        trace=trace,
        method=chosen,
        reason=reason,
        candidate=candidate,
        n=int(n),
        search_n=int(search_n),
        select_n=int(select_n),
        steps=int(steps),
        restarts=int(restarts),
        both_directions=bool(both_directions),
        name=mechanism.name,
    )
