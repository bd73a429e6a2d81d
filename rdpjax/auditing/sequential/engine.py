"""The sequential audit: draw in growing batches, bound at every look, stop at the first refutation.

**Looks and levels** (:mod:`rdpjax.auditing.sequential.schedule`): look ``k`` bounds ε(λ) from the
first ``n_k`` certifying outputs per side at family-wise level ``α_k``; ``Σ α_k ≤ α``, so a true
claim is refuted at some look with probability ≤ α however the audit stops.

**Settings fixed in advance.** Every setting of look ``k`` is a function of an independent pilot and
of ``n_k`` alone, both fixed before the certifying draws: the bandwidth, floor and β are the
defaults of a fixed-n bound at ``n_k`` (:class:`rdpjax.Defaults`) with the pilot's pooled robust
scale (:func:`rdpjax.estimator.settings.scheduled_settings`); the orders are
:func:`rdpjax.claims.orders.default_orders` at ``n_k`` unless given; the grid is fixed once, from
the pilot's range widened by ``margin`` widths, fine enough for the last look's bandwidth and with a
margin wide enough for the first's. Look ``k``'s bound is therefore exactly a fixed-n bound (as
:func:`rdpjax.stream.streamed_bound` (a :class:`~rdpjax.stream.BlackBox`) computes it) on ``n_k``
outputs with data-independent settings, valid at its level; the union over looks does the rest.
Discrete outputs (integer codes) need no pilot: the frequencies live on the codes seen (empty cells
add nothing to the estimate or its variance), with the floor ``max(0.03 n_k^−0.4, 4/n_k)``; integers
of any sign or size are counted as they come (:func:`add_batch`); vectors of codes ``(m, d)`` are
joint outcomes, numbered when first seen (as a fixed-n audit counts them, one code per distinct
row). Real outputs whose pilot takes few
values (:func:`rdpjax.estimator.support.looks_discrete`, as :func:`rdpjax.lower_bound` decides) are
counted the same way, on a table of the values seen.

**Any order.** A sampler is called for i.i.d. outputs, but may return a batch in any order (sorted,
or a discrete law written as ``np.repeat(values, rng.multinomial(m, p))``); nothing certified here
depends on that order, so no batch is permuted. The batch sizes are fixed by the schedule and
``batch_size`` alone, and a batch never straddles a look (:func:`look_ends`: the looks driver,
:func:`rdpjax.stream.looks.run_looks`, draws ``min(batch_size, n_k − drawn)``), so look ``k`` uses
exactly the outputs of the first batches, whole; and its bound is a function of the per-cell totals
(binned or counted), i.e. of the multiset of those outputs, not of their order (codes of a table are
assigned per batch in sorted order, a relabelling the frequencies do not see). The pilot is a
separate call used whole; where its own order matters (the robust scale and the discrete-or-not
decision look at strided subsamples when the pilot exceeds their size) it only moves settings fixed
before the certifying draws, which is all their validity needs. A sorted sampler therefore gives the
same looks as the unsorted one on the same draws (``tests/auditing/sequential/test_sequential.py``).

**Incremental counts.** Each batch is binned once onto the fixed grid (linear binning, the same
kernel as :class:`rdpjax.stream.BlackBox`) or counted (codes), and added to float64 totals: no draw
is redrawn or rebinned; a look costs one bound on the grid, independent of n.

**The accumulator** (:func:`looks_accumulator`, for :func:`rdpjax.stream.looks.run_looks`): the
state is :class:`Totals`; ``update`` adds a batch of each side (:func:`add_batch`), ``look`` bounds
look ``k`` from the totals (:func:`look_bound`) and stops when the bound exceeds the claim at
some order.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._json import json_floats
from rdpjax._precision import float64
from rdpjax.auditing.sequential.options import LookOptions
from rdpjax.auditing.sequential.schedule import Schedule
from rdpjax.auditing.sequential.setup import LookSetup, look_plan, setup_looks
from rdpjax.claims.orders import default_orders
from rdpjax.estimator.api import DEFAULTS
from rdpjax.estimator.bound_plan import Bound
from rdpjax.estimator.grid import bucket_size
from rdpjax.estimator.inputs import plan_options
from rdpjax.stream.batches import batch_counts, bin_batch
from rdpjax.stream.from_counts import bound_from_counts
from rdpjax.stream.looks import Accumulator

__all__ = [
    "MAX_CODES",
    "Totals",
    "add_batch",
    "empty_counts",
    "look_bound",
    "look_ends",
    "looks_accumulator",
]

MAX_CODES = 2**24
"""Codes below this index the counts directly (others go through a table of values); at most
this many distinct discrete outputs (larger alphabets: pass ``project``)."""


def _codes(setup: LookSetup, out: np.ndarray) -> np.ndarray:
    """Codes of outputs in the growing value table ``setup.values``.

    New values are appended in the order they first appear (those of one batch in sorted
    order): a one-to-one relabelling of the outcomes, which the relative frequencies (and so
    the bound) do not depend on. Integers stay integers (exact at any size); other outputs are
    compared as float64.
    """
    flat = np.asarray(out).reshape(-1)
    if flat.dtype.kind not in "biu":
        flat = flat.astype(np.float64)
    values, inverse = np.unique(flat, return_inverse=True)
    table = setup.values
    index = {v: i for i, v in enumerate(table)}
    for v in values.tolist():
        if v not in index:
            index[v] = len(table)
            table.append(v)
    if len(table) > MAX_CODES:
        raise ValueError(
            f"more than {MAX_CODES:,} distinct outputs: pass project= to map them to fewer codes."
        )
    return np.asarray([index[v] for v in values.tolist()], np.int64)[inverse.ravel()]


def _row_codes(setup: LookSetup, out: np.ndarray) -> np.ndarray:
    """Codes of vector outputs ``(m, d)`` in the growing row table ``setup.rows``.

    Each distinct row is one outcome, numbered when it is first seen (the new rows of a batch in
    sorted order): a one-to-one relabelling of the joint outcomes, which the relative
    frequencies do not depend on.
    """
    rows = np.asarray(out).reshape(len(out), -1).astype(np.int64)
    table = setup.rows
    if table and rows.shape[1] != len(table[0]):
        raise ValueError(f"outputs of dimension {rows.shape[1]}; the first had {len(table[0])}.")
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    index = {tuple(row): i for i, row in enumerate(table)}
    for row in unique.tolist():
        if tuple(row) not in index:
            index[tuple(row)] = len(table)
            table.append(row)
    if len(table) > MAX_CODES:
        raise ValueError(
            f"more than {MAX_CODES:,} distinct output vectors: pass project= to map them to "
            "fewer codes."
        )
    return np.asarray([index[tuple(row)] for row in unique.tolist()], np.int64)[inverse.ravel()]


def empty_counts(setup: LookSetup) -> np.ndarray:
    """Zero totals for ``setup``: an empty count vector (discrete), else zero pair rows."""
    if setup.discrete:
        return np.zeros(0, np.float64)
    return np.zeros((math.prod(setup.shape) + 1, 2), np.float64)  # bin_accumulator's rows


def add_batch(setup: LookSetup, counts: np.ndarray, outside: float, out: np.ndarray):
    """``(counts, outside)`` after adding one checked batch ``out``.

    Integer outputs (discrete) of any sign and size are counted: codes in ``[0, MAX_CODES)``
    index the counts directly until the first value outside that range; from then on every
    value goes through the table ``setup.values`` (:func:`_codes`), which starts with the
    codes used so far on either side (``setup.codes``), so the counts already made keep
    their meaning. Either way a value's count is its count: the relabelling is one-to-one and
    the relative-frequency bound is invariant to it, as a fixed-n audit's
    :func:`rdpjax.estimator.support.encode_pair` (an offset, or ``np.unique``) is.
    """
    if setup.discrete:
        if setup.rows is None and setup.values is None:
            if out.dtype.kind not in "biu":
                raise ValueError(f"discrete outputs must be integer codes; got {out.dtype}.")
            if out.size and (out.min() < 0 or out.max() >= MAX_CODES):
                # Integers outside [0, MAX_CODES): from now on a table of values, whose first
                # entries are the codes used so far (their counts keep their meaning).
                setup.values = list(range(setup.codes))
            elif out.size:
                setup.codes = max(setup.codes, int(out.max()) + 1)
        if setup.values is not None:
            out = _codes(setup, out)
        elif setup.rows is not None:
            out = _row_codes(setup, out)
        new = np.bincount(out.astype(np.int64)).astype(np.float64)
        if new.size > counts.size:
            counts = np.concatenate([counts, np.zeros(new.size - counts.size)])
        counts = counts.copy()
        counts[: new.size] += new
        return counts, outside
    x = np.asarray(out, np.float64).reshape(out.shape[0], -1)
    if x.shape[1] != setup.dim:
        raise ValueError(f"outputs of dimension {x.shape[1]}; the pilot's had {setup.dim}.")
    # NaN rows pad the batch to a bucketed length (few compiled binnings); they are neither
    # binned nor counted (rdpjax.estimator.binning.bin_chunk with an interior).
    x = np.concatenate([x, np.full((bucket_size(len(x)) - len(x), x.shape[1]), np.nan)])
    with float64():
        acc, off = bin_batch(
            jnp.asarray(counts),
            jnp.asarray(outside, jnp.float64),
            x,
            np.asarray(setup.low),
            np.asarray(setup.spacing),
            layout=setup.layout(),
        )
    return np.asarray(acc), float(off)


def look_bound(
    setup: LookSetup, counts, outside, k: int, n: int, orders, alpha: float, options: LookOptions
):
    """The bound of look ``k`` (``n`` outputs per side, orders, level ``alpha``) from the totals.

    It is :meth:`rdpjax.BoundPlan.bound` with the look's scheduled settings.
    """
    discrete = setup.discrete
    with float64():
        common = plan_options(
            orders,
            alpha=alpha,
            floor=options.floor,
            beta=options.beta,
            discrete=discrete,
            both_directions=options.both_directions,
            variance=options.variance,
            second_order=options.second_order,
            defaults=DEFAULTS,
        )
        if discrete:
            size = bucket_size(max(counts[0].size, counts[1].size, 1))
            padded = [np.pad(c, (0, size - c.size)) for c in counts]
            drawn = look_plan(setup, k, n, common, size=size)
        else:
            drawn = look_plan(setup, k, n, common)
            padded = [
                np.asarray(
                    batch_counts(jnp.asarray(c), drawn.low, drawn.spacing, layout=drawn.layout)
                )
                for c in counts
            ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the outside mass is reported once, by the caller
            bound: Bound = bound_from_counts(
                drawn, tuple(padded), tuple(outside), (n, n), outside="clip", stacklevel=2
            )
    return jax.tree.map(np.asarray, bound)


class Totals(NamedTuple):
    """What the Rényi looks have counted and decided: the state of :func:`looks_accumulator`.

    Attributes:
      setup: the settings fixed before the certifying draws (kind, grid, per-look h, τ, β) and
        the tables of the discrete outputs seen (they grow in place: a relabelling that only
        ever appends, so an earlier state stays valid).
      counts: ``(P, Q)`` float64 accumulators (discrete counts, or linear-binning pairs).
      outside: ``(P, Q)`` numbers of outputs clamped onto the edge of the grid.
      pilot: outputs per side drawn for the pilot (0 for discrete outputs).
      looks: one dict per look taken (:func:`look_record`).
      bound: the bound of the last look taken in this process (``None`` after a resume).
    """

    setup: LookSetup
    counts: tuple[np.ndarray, np.ndarray]
    outside: tuple[float, float]
    pilot: int
    looks: tuple[dict, ...] = ()
    bound: Any = None


def look_ends(sizes, batch_size: int) -> tuple[list[int], list[int]]:
    """The batch ends (outputs per side) and the indices of the looks among them.

    From each look to the next, batches of ``batch_size`` and a last one up to the look:
    ``min(batch_size, n_k − drawn)`` outputs a batch, a function of the schedule alone.
    """
    ends, looks = [], []
    for n_k in sizes:
        start = ends[-1] if ends else 0
        ends.extend(range(start + batch_size, n_k, batch_size))
        ends.append(int(n_k))
        looks.append(len(ends) - 1)
    return ends, looks


def look_record(k: int, n_k: int, pilot: int, bound, claim, schedule: Schedule) -> dict:
    """Look ``k``'s entry of the report: its bound and whether it refutes ``claim``."""
    lower = np.asarray(bound.lower, np.float64)
    claimed = None if claim is None else np.asarray(claim(bound.lam), np.float64)
    refuted = bool(claimed is not None and np.any(lower > claimed))
    return {
        "k": k + 1,
        "n": n_k,
        "drawn": n_k + pilot,
        "alpha": schedule.alphas[k],
        "lam": json_floats(bound.lam),
        "lower": json_floats(lower),
        "estimate": json_floats(bound.estimate),
        "claimed": None if claimed is None else json_floats(claimed),
        "refuted": refuted,
    }


def looks_accumulator(source, schedule: Schedule, lam, claim, options: LookOptions) -> Accumulator:
    """The Rényi looks as an :class:`~rdpjax.stream.looks.Accumulator` over :class:`Totals`.

    ``init`` fixes the settings (:func:`setup_looks`, the pilot drawn from ``source``);
    ``update`` adds a batch of each side; ``look(totals, k)`` bounds look ``k`` at its level
    ``α_k`` with its orders (``lam``, or :func:`rdpjax.claims.orders.default_orders` at
    ``n_k``), records it and stops when it refutes ``claim``; ``result`` is the totals with the
    last look's bound.
    """

    def init() -> Totals:
        setup, pilot = setup_looks(source, schedule, options)
        empty = empty_counts(setup)
        return Totals(setup, (empty, empty.copy()), (0.0, 0.0), pilot)

    def update(totals: Totals, bx, by) -> Totals:
        counts, outside = list(totals.counts), list(totals.outside)
        for side, out in enumerate((bx, by)):
            if out is not None:
                counts[side], outside[side] = add_batch(
                    totals.setup, counts[side], outside[side], out
                )
        return totals._replace(counts=tuple(counts), outside=tuple(outside))

    def bound_at(totals: Totals, k: int):
        n_k = schedule.sizes[k]
        if lam is not None:
            orders = [float(v) for v in np.atleast_1d(np.asarray(lam, np.float64))]
        else:
            orders = [float(v) for v in default_orders(claim, n_k)]
        return look_bound(
            totals.setup, totals.counts, totals.outside, k, n_k, orders, schedule.alphas[k],
            options,
        )  # fmt: skip

    def look(totals: Totals, k: int) -> tuple[Totals, bool]:
        if k < len(totals.looks):  # taken before the checkpoint: its α is spent, its decision kept
            return totals, bool(totals.looks[k]["refuted"])
        bound = bound_at(totals, k)
        record = look_record(k, schedule.sizes[k], totals.pilot, bound, claim, schedule)
        return totals._replace(looks=(*totals.looks, record), bound=bound), record["refuted"]

    def result(totals: Totals) -> Totals:
        if totals.bound is None:  # resumed after the last look: the totals are those of that look
            return totals._replace(bound=bound_at(totals, len(totals.looks) - 1))
        return totals

    return Accumulator(init, update, look, result)
