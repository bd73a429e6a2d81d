"""The public driver :func:`find_pair` and its result, :class:`SearchResult`.

For a JAX mechanism, :func:`find_pair` fixes the objectives by a pilot
(:mod:`rdpjax.search.objective`), runs the vmapped searches and the evaluation of their
candidates on the selection draws (:mod:`rdpjax.search.optimize`), picks one pair for all
orders, and certifies it on fresh draws (:mod:`rdpjax.search.certification`). For a numpy black
box it runs the optuna search of :mod:`rdpjax.search.derivative_free` over the explicit domain
and neighbouring relation (:mod:`rdpjax.search.neighbours`) instead, then certifies the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rdpjax._precision import float64
from rdpjax._validation import check_int, check_orders
from rdpjax.mechanisms.base import Mechanism
from rdpjax.search.certification import certify, search_keys
from rdpjax.search.derivative_free import SAMPLERS, search_black_box
from rdpjax.search.neighbours import black_box_space, check_neighbours
from rdpjax.search.objective import build_objective
from rdpjax.search.optimize import (
    CANDIDATES,
    METHODS,
    choose_method,
    search_fn,
    select_candidate,
)
from rdpjax.search.result import SearchResult
from rdpjax.search.space import SearchSpace, resolve_space

__all__ = ["SearchResult", "find_pair"]


def find_pair(
    mechanism: Mechanism | Callable,
    lam: float | Sequence[float],
    *,
    key: jax.Array,
    m: int | None = None,
    domain: tuple[float, float] | None = None,
    levels: int | None = None,
    space: SearchSpace | None = None,
    neighbours: str | None = None,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 100,
    restarts: int | None = None,
    trials: int = 200,
    top: int = 3,
    n: int = 100_000,
    search_n: int | None = None,
    select_n: int | None = None,
    population: int = 8,
    alpha: float = 0.05,
    both_directions: bool = False,
    method: str = "auto",
    progress: bool | None = None,
    options: dict | None = None,
) -> SearchResult:
    """Search the neighbouring pair with the largest estimated ``D_λ``, then certify its bound.

    **JAX mechanism**: for each order, ``restarts`` searches (vmapped) maximize the plug-in
    estimate on common random numbers (see :mod:`rdpjax.search`), one pair is picked for all
    orders on independent selection draws (among the restarts' final pairs and their variants,
    :data:`CANDIDATES`), and it is certified with :func:`rdpjax.lower_bound` on ``n`` fresh
    draws per side from a key the search never used, at level ``alpha / (L · directions)``.

    **Numpy black box** ``sample(rng, database, m)`` (any callable that is not a
    :class:`~rdpjax.mechanisms.Mechanism`; ``rng`` a ``numpy.random.Generator``): its domain is
    explicit — ``m`` entries in ``domain = (low, high)`` (optionally on ``levels`` values) under the
    relation ``neighbours`` (``"replace-one"`` or ``"add-remove"``,
    :mod:`rdpjax.search.neighbours`). ``restarts`` optuna studies of ``trials`` trials each (TPE,
    seeded from ``key``) score candidate pairs by the plug-in estimate on ``search_n`` draws per
    side; the ``top`` trials of each study and their variants are scored again on ``select_n``
    independent selection draws and one pair is kept (:mod:`rdpjax.search.derivative_free`); it is
    certified with :func:`rdpjax.stream.blackbox.blackbox_bound` on ``n`` fresh draws per side at
    level ``alpha / (L · directions)`` (Bonferroni over orders and directions).

    **Why the certified bound is valid**: the pair is a function of the search and selection
    draws only; it is fixed before the certifying draws (from ``SearchKeys.certify``, a key the
    search never touched) exist, so the certified bound is a valid lower bound on ``D_λ`` at
    that pair, hence on ε(λ), however the pair was chosen; no correction for the search is due.

    Args:
      mechanism: a mechanism of :mod:`rdpjax.mechanisms` (or :func:`~rdpjax.mechanisms.
        from_sampler`) taking databases of shape ``(m,)`` or ``(m, d)``; or a numpy black box
        taking databases of shape ``(m,)`` (``(m − 1,)`` for the smaller of an add-remove pair).
      lam: one order λ > 1 or several; each gets its own restarts (JAX), one pair is certified.
      key: PRNG key; split as :class:`~rdpjax.search.SearchKeys` describes.
      m: number of entries; for a JAX mechanism default from
        :func:`~rdpjax.search.search_space` (10 for paper 000); required for a black box.
      domain: ``(low, high)`` of every entry; for a JAX mechanism default from
        :func:`~rdpjax.search.search_space` ((0, 1)); required for a black box.
      levels: restrict entries to this many equally spaced values (2: bits).
      space: a whole :class:`SearchSpace` (e.g. rows in ``[0, 1]^d``: ``row=(d,)``) instead of
        :func:`~rdpjax.search.search_space`'s; ``m``, ``domain`` and ``levels`` still override
        it. A black box takes scalar entries only.
      neighbours: the neighbouring relation: required for a black box (``"replace-one"`` or
        ``"add-remove"``); for a JAX mechanism ``None`` or ``"replace-one"``.
      optimizer: any optax transformation for the gradient search; default Adam with a
        cosine-decayed step of 5% of the domain width. Its updates are followed by the
        projection onto the domain (``optax.projections.projection_box``).
      steps: search steps per restart (static; JAX mechanisms).
      restarts: independent restarts per order (JAX; vmapped; restart r of the gradient search
        changes entry ``r mod m``; default 8), or independent optuna studies (black box, each
        with its own sampler seed and search draws; default 4).
      trials: black box: trials per optuna study (each one bound on ``search_n`` draws per side).
      top: black box: best trials of each study re-scored on the selection draws (with their
        variants).
      n: certification draws per side.
      search_n: draws per side of the search objective; default ``min(n, 4096)``.
      select_n: draws per side of the selection among candidates (the same draws for every
        candidate); default ``min(n, 4 · search_n)``.
      population: proposals per step of the evolutionary search.
      alpha: family-wise error level in (0, 0.5) of all reported bounds.
      both_directions: certify ``D_λ`` in both directions of the pair found and keep the larger
        (2L bounds). The search already covers both orders of a pair (x and x' are both free;
        add-remove: removing and adding an entry).
      method: JAX: ``"auto"``, ``"gradient"`` or ``"evolutionary"``. Auto uses the gradient for
        continuous outputs of a continuous domain when the gradient at the start is finite and
        non-zero, the evolutionary search otherwise; the result says which and why. Black box:
        ``"auto"`` or ``"tpe"`` (optuna's TPE sampler), or ``"random"`` (random search, a
        baseline).
      progress: black box: a tqdm bar on stderr over the trials; ``None`` shows it once the
        search has taken 2 s, ``False`` never.
      options: black box: more keyword arguments of :func:`rdpjax.stream.blackbox.blackbox_bound`
        for every bound (``discrete``, ``support_size``, ``project``, …).

    Returns:
      A :class:`SearchResult`; its ``neighbours`` names the relation.

    Raises:
      ValueError: on invalid arguments (a black box without its domain or relation, or with an
        invalid one), a mechanism whose adjacency is not "one entry differs"
        (:func:`~rdpjax.search.search_space`), ``method="gradient"`` with discrete outputs, or
        anything :func:`rdpjax.lower_bound` (:func:`rdpjax.stream.blackbox.blackbox_bound`) rejects.
      ModuleNotFoundError: for a black box when optuna is not installed
        (``pip install 'rdpjax[search]'``).

    Example:
      >>> import jax, rdpjax
      >>> from rdpjax.search import find_pair
      >>> mech = rdpjax.mechanisms.Gaussian(5.0)
      >>> res = find_pair(mech, 2.0, key=jax.random.key(0), steps=20, restarts=2, n=20_000)
      >>> res.method
      'gradient'
    """
    orders = check_orders(lam)
    black_box = not isinstance(mechanism, Mechanism)
    if black_box and not callable(mechanism):
        raise ValueError(
            "mechanism must be a Mechanism or a numpy black box sample(rng, database, m); got "
            f"{mechanism!r}"
        )
    restarts = (4 if black_box else 8) if restarts is None else restarts
    for name, value, least in (
        ("steps", steps, 1),
        ("restarts", restarts, 1),
        ("trials", trials, 1),
        ("top", top, 1),
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
    if progress not in (None, True, False):
        raise ValueError(f"progress must be None, True or False; got {progress!r}")
    settings = dict(n=n, search_n=search_n, select_n=select_n, alpha=alpha, restarts=restarts)
    if black_box:
        return _find_pair_black_box(
            mechanism,
            orders,
            key=key,
            space=black_box_space(m, domain, levels, space),
            neighbours=check_neighbours(neighbours),
            trials=trials,
            top=top,
            both_directions=both_directions,
            method=method,
            progress=progress,
            options=dict(options or {}),
            **settings,
        )
    if neighbours not in (None, "replace-one"):
        raise ValueError(
            f"{mechanism.name}: the search of a JAX mechanism covers the replace-one relation "
            f"(one entry differs) only; got neighbours={neighbours!r}. For add-remove, pass the "
            "mechanism as a numpy black box sample(rng, database, m)."
        )
    if options:
        raise ValueError("options= applies to numpy black boxes only")
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
    return _result(
        bound,
        orders,
        xs[best],
        xs_prime[best],
        final_j[best],
        search_value=values[best],
        trace=trace,
        method=chosen,
        reason=reason,
        candidate=CANDIDATES[best // (n_orders * restarts)],
        steps=steps,
        both_directions=both_directions,
        name=mechanism.name,
        neighbours="replace-one",
        **settings,
    )


def _find_pair_black_box(
    sample: Callable, orders, *, key, space, neighbours, trials, top, method, options, **rest
) -> SearchResult:
    """:func:`find_pair` on a numpy black box (arguments checked but ``method``)."""
    if method not in ("auto", *SAMPLERS):
        raise ValueError(
            f"method for a numpy black box must be one of {('auto', *SAMPLERS)} (the gradient "
            f"and evolutionary searches need a JAX mechanism); got {method!r}"
        )
    keys = search_keys(key)
    sampler = "tpe" if method == "auto" else method
    progress = rest.pop("progress")
    run = search_black_box(
        sample,
        orders,
        keys=keys,
        space=space,
        neighbours=neighbours,
        trials=trials,
        restarts=rest["restarts"],
        search_n=rest["search_n"],
        select_n=rest["select_n"],
        top=top,
        method=sampler,
        progress=progress,
        options=options,
    )
    bound = certify(  # fresh draws: keys.certify was never used by the search
        sample,
        run.x,
        run.x_prime,
        orders,
        key=keys.certify,
        n=rest["n"],
        alpha=rest["alpha"],
        both_directions=rest["both_directions"],
        options=options,
    )
    return _result(
        bound,
        orders,
        run.x,
        run.x_prime,
        run.index,
        search_value=run.values,
        trace=run.trace,
        method=sampler,
        reason=run.reason,
        candidate=run.candidate,
        steps=trials,
        name=getattr(sample, "__name__", type(sample).__name__),
        neighbours=neighbours,
        **rest,
    )


def _result(bound, orders, x, x_prime, index, **fields) -> SearchResult:
    """The :class:`SearchResult` of a certified pair."""
    ints = ("n", "search_n", "select_n", "steps", "restarts")
    return SearchResult(
        lam=orders,
        x=np.asarray(x),
        x_prime=np.asarray(x_prime),
        index=np.asarray(index, np.int64),
        lower=np.asarray(bound.lower),
        estimate=np.asarray(bound.estimate),
        std_error=np.asarray(bound.std_error),
        bias=np.asarray(bound.bias),
        direction=np.asarray(bound.direction),
        level=np.asarray(bound.level),
        alpha=np.asarray(float(fields.pop("alpha"))),
        search_value=np.asarray(fields.pop("search_value")),
        trace=np.asarray(fields.pop("trace")),
        both_directions=bool(fields.pop("both_directions")),
        **{k: int(fields.pop(k)) for k in ints},
        **fields,
    )
