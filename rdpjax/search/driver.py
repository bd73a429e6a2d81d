"""The public driver :func:`find_pair` and its result, :class:`SearchResult`.

For a JAX mechanism, :func:`find_pair` fixes the objectives by a pilot
(:mod:`rdpjax.search.objective`), runs the vmapped searches and the evaluation of their
candidates on the selection draws (:mod:`rdpjax.search.optimize`), picks one pair for all
orders, and certifies it on fresh draws (:mod:`rdpjax.search.certification`). For a numpy black
box it runs the optuna search of :mod:`rdpjax.search.derivative_free` over the explicit domain
and neighbouring relation (:mod:`rdpjax.search.neighbours`) instead, then certifies the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_orders
from rdpjax.estimator.options import BoundOptions
from rdpjax.mechanisms.base import Mechanism
from rdpjax.search.certification import certify, search_keys
from rdpjax.search.config import BlackBoxOptions, Budget, Certification, Pairs
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
from rdpjax.search.space import resolve_space
from rdpjax.stream.options import StreamOptions

__all__ = ["Budget", "Certification", "Pairs", "SearchResult", "find_pair"]


def find_pair(
    key: jax.Array,
    mechanism: Mechanism | Callable,
    lam: float | Sequence[float],
    *,
    pairs: Pairs | None = None,
    budget: Budget | None = None,
    certification: Certification | None = None,
    progress: bool | None = None,
    options: BoundOptions | None = None,
    stream: StreamOptions | None = None,
) -> SearchResult:
    """Search the neighbouring pair with the largest estimated ``D_λ``, then certify its bound.

    **JAX mechanism**: for each order, ``budget.restarts`` searches (vmapped) maximize the
    plug-in estimate on common random numbers (see :mod:`rdpjax.search`), one pair is picked for
    all orders on independent selection draws (among the restarts' final pairs and their
    variants, :data:`CANDIDATES`), and it is certified with :func:`rdpjax.lower_bound` on
    ``certification.n`` fresh draws per side from a key the search never used, at level
    ``alpha / (L · directions)``.

    **Numpy black box** ``sample(rng, database, m)`` (any callable that is not a
    :class:`~rdpjax.mechanisms.Mechanism`; ``rng`` a ``numpy.random.Generator``): its domain is
    explicit — ``pairs.m`` entries in ``pairs.domain = (low, high)`` (optionally on ``pairs.levels``
    values) under the relation ``pairs.neighbours`` (``"replace-one"`` or ``"add-remove"``,
    :mod:`rdpjax.search.neighbours`). ``budget.restarts`` optuna studies of ``budget.trials`` trials
    each (TPE, seeded from ``key``) score candidate pairs by the plug-in estimate on
    ``budget.search_n`` draws per side; the ``budget.top`` trials of each study and their variants
    are scored again on ``budget.select_n`` independent selection draws and one pair is kept
    (:mod:`rdpjax.search.derivative_free`); it is certified with
    :func:`rdpjax.stream.streamed_bound` (a :class:`~rdpjax.stream.BlackBox`) on ``certification.n``
    fresh draws per side at level ``alpha / (L · directions)`` (Bonferroni over orders and
    directions).

    **Why the certified bound is valid**: the pair is a function of the search and selection
    draws only; it is fixed before the certifying draws (from ``SearchKeys.certify``, a key the
    search never touched) exist, so the certified bound is a valid lower bound on ``D_λ`` at
    that pair, hence on ε(λ), however the pair was chosen; no correction for the search is due.

    Args:
      key: PRNG key; split as :class:`~rdpjax.search.SearchKeys` describes.
      mechanism: a mechanism of :mod:`rdpjax.mechanisms` (or :func:`~rdpjax.mechanisms.
        from_sampler`) taking databases of shape ``(m,)`` or ``(m, d)``; or a numpy black box
        taking databases of shape ``(m,)`` (``(m − 1,)`` for the smaller of an add-remove pair).
      lam: one order λ > 1 or several; each gets its own restarts (JAX), one pair is certified.
      pairs: the databases searched and the neighbouring relation (:class:`Pairs`); default
        ``Pairs()``: the mechanism's :func:`~rdpjax.search.search_space` under replace-one (a
        black box needs ``m``, ``domain`` and ``neighbours``).
      budget: the method and the search's sizes (:class:`Budget`); default ``Budget()``.
      certification: the certified bound's draws per side, level and directions
        (:class:`Certification`); default ``Certification()``.
      progress: black box: a tqdm bar on stderr over the trials; ``None`` shows it once the
        search has taken 2 s, ``False`` never.
      options: black box: the estimator's :class:`rdpjax.BoundOptions` for every bound
        (``discrete``, …).
      stream: black box: the :class:`rdpjax.stream.StreamOptions` of every bound
        (``support_size``, ``project``, ``batch_size``, …); the search's pilots are its own.

    Returns:
      A :class:`SearchResult`; its ``neighbours`` names the relation.

    Raises:
      ValueError: on invalid arguments (a black box without its domain or relation, a method
        of the other kind of search), a mechanism whose adjacency is not "one entry differs"
        (:func:`~rdpjax.search.search_space`), ``method="gradient"`` with discrete outputs, or
        anything :func:`rdpjax.lower_bound` (or, for a black box,
        :func:`rdpjax.stream.streamed_bound`) rejects. Invalid fields of :class:`Pairs`,
        :class:`Budget` and :class:`Certification` raise when those are made.
      ModuleNotFoundError: for a black box when optuna is not installed
        (``pip install 'rdpjax[search]'``).

    Example:
      >>> import jax, rdpjax
      >>> from rdpjax.search import Budget, Certification, find_pair
      >>> mech = rdpjax.mechanisms.Gaussian(5.0)
      >>> res = find_pair(jax.random.key(0), mech, 2.0, budget=Budget(steps=20, restarts=2),
      ...                 certification=Certification(n=20_000))
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
    pairs = Pairs() if pairs is None else pairs
    budget = Budget() if budget is None else budget
    certification = Certification() if certification is None else certification
    for name, value, kind in (
        ("pairs", pairs, Pairs),
        ("budget", budget, Budget),
        ("certification", certification, Certification),
    ):
        if not isinstance(value, kind):
            raise ValueError(f"{name} must be a {kind.__name__}; got {value!r}")
    if progress not in (None, True, False):
        raise ValueError(f"progress must be None, True or False; got {progress!r}")
    budget = _resolve_budget(budget, certification.n, black_box)
    if black_box:
        return _find_pair_black_box(
            mechanism,
            orders,
            key=key,
            space=black_box_space(pairs.m, pairs.domain, pairs.levels, pairs.space),
            neighbours=check_neighbours(pairs.neighbours),
            budget=budget,
            certification=certification,
            progress=progress,
            options=BlackBoxOptions.of(options, stream),
        )
    if pairs.neighbours not in (None, "replace-one"):
        raise ValueError(
            f"{mechanism.name}: the search of a JAX mechanism covers the replace-one relation "
            f"(one entry differs) only; got neighbours={pairs.neighbours!r}. For add-remove, "
            "pass the mechanism as a numpy black box sample(rng, database, m)."
        )
    if options is not None or stream is not None:
        raise ValueError("options= and stream= apply to numpy black boxes only")
    if budget.method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {budget.method!r}")
    method, steps, restarts = budget.method, budget.steps, budget.restarts
    population, optimizer = budget.population, budget.optimizer
    space = resolve_space(mechanism, pairs.space, pairs.m, pairs.domain, pairs.levels)
    keys = search_keys(key)
    n_orders = orders.size

    with float64():
        discrete = mechanism.output(jnp.full(space.shape, space.snap(space.low))).is_discrete
        chosen, reason = choose_method(method, discrete, space)
        per_restart = jax.random.split(keys.search, restarts + 1)
        objective = build_objective(mechanism, space, per_restart[:restarts], budget.search_n)
        selection = build_objective(mechanism, space, per_restart[:restarts], budget.select_n)
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
        keys.certify,
        mechanism,
        xs[best],
        xs_prime[best],
        orders,
        n=certification.n,
        alpha=certification.alpha,
        both_directions=certification.both_directions,
    )
    return _result(
        bound,
        orders,
        xs[best],
        xs_prime[best],
        final_j[best],
        budget=budget,
        certification=certification,
        search_value=values[best],
        trace=trace,
        method=chosen,
        reason=reason,
        candidate=CANDIDATES[best // (n_orders * restarts)],
        steps=steps,
        name=mechanism.name,
        neighbours="replace-one",
    )


def _resolve_budget(budget: Budget, n: int, black_box: bool) -> Budget:
    """``budget`` with its defaults that depend on the mechanism's kind and on ``n`` filled in."""
    restarts = (4 if black_box else 8) if budget.restarts is None else budget.restarts
    search_n = min(n, 4096) if budget.search_n is None else budget.search_n
    select_n = min(n, 4 * search_n) if budget.select_n is None else budget.select_n
    return dataclasses.replace(budget, restarts=restarts, search_n=search_n, select_n=select_n)


def _find_pair_black_box(
    sample: Callable,
    orders,
    *,
    key,
    space,
    neighbours,
    budget,
    certification,
    progress,
    options: BlackBoxOptions,
) -> SearchResult:
    """:func:`find_pair` on a numpy black box (arguments checked but ``budget.method``)."""
    if budget.method not in ("auto", *SAMPLERS):
        raise ValueError(
            f"method for a numpy black box must be one of {('auto', *SAMPLERS)} (the gradient "
            f"and evolutionary searches need a JAX mechanism); got {budget.method!r}"
        )
    keys = search_keys(key)
    sampler = "tpe" if budget.method == "auto" else budget.method
    budget = dataclasses.replace(budget, method=sampler)
    run = search_black_box(
        sample,
        orders,
        keys=keys,
        space=space,
        neighbours=neighbours,
        budget=budget,
        progress=progress,
        options=options,
    )
    bound = certify(  # fresh draws: keys.certify was never used by the search
        keys.certify,
        sample,
        run.x,
        run.x_prime,
        orders,
        n=certification.n,
        alpha=certification.alpha,
        both_directions=certification.both_directions,
        black_box=options,
    )
    return _result(
        bound,
        orders,
        run.x,
        run.x_prime,
        run.index,
        budget=budget,
        certification=certification,
        search_value=run.values,
        trace=run.trace,
        method=sampler,
        reason=run.reason,
        candidate=run.candidate,
        steps=budget.trials,
        name=getattr(sample, "__name__", type(sample).__name__),
        neighbours=neighbours,
    )


def _result(
    bound, orders, x, x_prime, index, *, budget: Budget, certification: Certification, **fields
) -> SearchResult:
    """The :class:`SearchResult` of a certified pair."""
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
        alpha=np.asarray(float(certification.alpha)),
        search_value=np.asarray(fields.pop("search_value")),
        trace=np.asarray(fields.pop("trace")),
        both_directions=bool(certification.both_directions),
        n=int(certification.n),
        search_n=int(budget.search_n),
        select_n=int(budget.select_n),
        steps=int(fields.pop("steps")),
        restarts=int(budget.restarts),
        **fields,
    )
