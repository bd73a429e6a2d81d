"""A streamed audit's two statistics on one pass of draws: the Rényi bounds and the rejection sets.

A stream keeps no draws, so the rejection sets once certified on a stream of their own: a
streamed audit of an (ε, δ) claim drew about 2.4 n outputs a side for n asked (the Rényi
bound's pilot of 2^16 and its n, then the sets' selection and their n). Here every statistic
counts the same draws:

1. ``m = selection · n`` draws a side (:func:`rdpjax.rejection.streamed.selection_size`) plan
   both statistics: the sets' cells, candidates and orderings are chosen on them, and they are
   the pilot that fixes the Rényi bound's grid, bandwidth and floor
   (:func:`rdpjax.stream.pilot.fix_settings`).
2. ``N ~ Poisson(n − m)`` further draws a side (the pooled-guess test's Poissonization,
   :mod:`rdpjax.rejection.pooled`) are drawn once and counted twice as they come, on the Rényi
   grid and on the sets' cells (:meth:`rdpjax.stream.sources.Source.tally`).

Both plans are fixed before the counted draws exist, as each statistic's validity needs; the
sizes N are drawn from the key, independent of every output, so the Rényi bound on N draws a side
is the ordinary bound given N. α is split as before (α/2 each); the keys are those of the two
separate streams they replace (the Rényi stream's ``key``, the sets' ``fold_in(key, 0x5E75)``).
Drawn per side: ``m + N ≈ n`` (``tests/auditing/test_one_pass.py`` counts them).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from rdpjax._keys import key_rng
from rdpjax._precision import float64
from rdpjax.auditing.draws import progress_bar, with_projection
from rdpjax.auditing.sets import SETS_TAG
from rdpjax.estimator.bound_plan import Bound
from rdpjax.mechanisms.base import Mechanism
from rdpjax.rejection.api import Counts, counted_set_test, selection_in_random_order
from rdpjax.rejection.result import SetTest
from rdpjax.rejection.streamed import selection_size
from rdpjax.stream.driver import check_bound_options, tally_bound
from rdpjax.stream.pilot import streamable
from rdpjax.stream.sources import NumpySource, Source, mechanism_source

__all__ = ["shared_draws"]


def shared_draws(
    mechanism: Any,
    key: Any,
    pair: tuple[Any, Any],
    orders: list[float],
    n: int,
    claim: Any,
    alphas: tuple[float, float],
    both_directions: bool,
    project: Any,
    options: Any,
) -> tuple[Bound, SetTest, dict[str, int]]:
    """The Rényi bounds and the rejection-set test of a streamed audit, on the same draws.

    Args:
        mechanism: a :class:`~rdpjax.mechanisms.Mechanism` (drawn in a compiled scan) or a numpy
            black box ``sample(rng, database, m)``.
        key: the audit's JAX key.
        pair: the adjacent databases ``(x, x')``.
        orders: the Rényi orders.
        n: outputs asked per database.
        claim: the claim the sets test (kind ``pure_dp``, ``approx_dp`` or ``gdp``).
        alphas: the levels of the Rényi bounds and of the sets.
        both_directions: also bound ``D_λ(Q‖P)``.
        project: a fixed function of a batch, or ``None``.
        options: the :class:`~rdpjax.auditing.AuditOptions` (its ``bound``, ``sets``, ``stream``
            and ``progress``); the bound options already resolved for a stream.

    Returns:
        ``(bound, sets, sizes)``, ``sizes`` the outputs per side: ``drawn`` (the most on
        either side), ``planning`` (m) and ``counted`` (the fewer N).

    Raises:
        ValueError: when the outputs are not one number each (vectors need ``project=``), or
            ``n`` leaves fewer than two draws a side to count.
    """
    x, x_prime = pair
    bound_options = streamable(options.bound)
    m = selection_size(n, options.sets)
    if n - m < 2:
        raise ValueError(f"n = {n:,} leaves fewer than 2 draws a side after {m:,} to plan with.")
    source, stream = _source(mechanism, key, x, x_prime, project, options.stream.replace(pilot=m))
    rng = key_rng(key, SETS_TAG)
    rate = float(n - m)
    poissons = (int(rng.poisson(rate)), int(rng.poisson(rate)))
    drawn = (max(poissons[0], 2), max(poissons[1], 2))  # a Rényi bound needs 2 a side
    kept: dict[str, Any] = {}
    with float64(), warnings.catch_warnings():
        # Draws off the pilot's grid are clamped onto its edge (a fixed map: the bound stays
        # valid). Bound.outside keeps the count and --verbose says it.
        warnings.filterwarnings("ignore", message=r".*clamped onto its edge")
        check_bound_options(orders, alphas[0], both_directions, bound_options)
        kind = source.kind(bound_options, stream)
        if kind[1] != 1:
            raise ValueError(
                f"{claim} is checked by rejection sets on 1-D outputs or codes; the outputs have "
                f"dimension {kind[1]}: pass project=, a fixed function to one number per output."
            )
        # In an order drawn from the key, whatever order the sampler returned them in.
        select = selection_in_random_order(key, source.pilot())

        def count(edges: np.ndarray) -> Counts:
            with progress_bar(sum(drawn), options.progress, "drawing and counting") as bar:
                advance = lambda done, total: bar.update(int(done) - bar.n)  # noqa: E731
                bound, tally = tally_bound(
                    source, orders, kind=kind, sizes=drawn, alpha=alphas[0],
                    both_directions=both_directions, options=bound_options,
                    stream=stream.replace(progress=advance), cells=edges,
                )  # fmt: skip
            kept["bound"] = bound
            assert tally.cells is not None
            c_p, c_q = (np.rint(c).astype(np.int64) for c in tally.cells)
            exact = drawn == poissons  # else not Poisson counts: the pooled test is skipped
            return Counts(c_p, c_q, (c_p, c_q) if exact else None, rate)

        sets = counted_set_test(
            rng, select, count, (int(rate), int(rate)), claim,
            alpha=alphas[1], options=options.sets, streamed=True,
        )  # fmt: skip
    sizes = {"drawn": m + max(drawn), "planning": m, "counted": min(drawn)}
    return kept["bound"], sets, sizes


def _source(mechanism, key, x, x_prime, project, stream) -> tuple[Source, Any]:
    """The source and its stream options, as the streamed bound makes them.

    A zoo mechanism (projected): :func:`~rdpjax.stream.sources.mechanism_source`; anything else
    a :class:`NumpySource` with ``project`` applied to each batch.
    """
    if isinstance(mechanism, Mechanism):
        mech = mechanism if project is None else with_projection(mechanism, project)
        return mechanism_source(key, mech, x, x_prime, stream)
    return NumpySource(key, mechanism, x, x_prime), stream.replace(project=project)
