"""The sequential audit: draw in growing batches, bound at every look, stop at the first refutation.

**Looks and levels** (:mod:`rdpjax.auditing.sequential.schedule`): look ``k`` bounds ε(λ) from the
first ``n_k`` certifying outputs per side at family-wise level ``α_k``; ``Σ α_k ≤ α``, so a true
claim is refuted at some look with probability ≤ α however the audit stops.

**Settings fixed in advance.** Every setting of look ``k`` is a function of an independent pilot and
of ``n_k`` alone, both fixed before the certifying draws: the bandwidth, floor and β are the
defaults of a fixed-n bound at ``n_k`` (:class:`rdpjax.Defaults`) with the pilot's pooled robust
scale (:func:`rdpjax.estimator.settings.scheduled_settings`); the orders are
:func:`rdpjax.estimator.orders.default_orders` at ``n_k`` unless given; the grid is fixed once, from
the pilot's range widened by ``margin`` widths, fine enough for the last look's bandwidth and with a
margin wide enough for the first's. Look ``k``'s bound is therefore exactly a fixed-n bound (as
:func:`rdpjax.stream.blackbox.blackbox_bound` computes it) on ``n_k`` outputs with data-independent
settings, valid at its level; the union over looks does the rest. Discrete outputs (integer codes)
need no pilot: the frequencies live on the codes seen (empty cells add nothing to the estimate or
its variance), with the floor ``max(0.03 n_k^−0.4, 4/n_k)``; integers of any sign or size are
counted as they come (:func:`add_batch`); vectors of codes ``(m, d)`` are joint
outcomes, numbered when first seen (as a fixed-n audit counts them, one code per distinct
row). Real outputs whose pilot takes few
values (:func:`rdpjax.estimator.support.looks_discrete`, as :func:`rdpjax.lower_bound` decides) are
counted the same way, on a table of the values seen.

**Any order.** A sampler is called for i.i.d. outputs, but may return a batch in any order (sorted,
or a discrete law written as ``np.repeat(values, rng.multinomial(m, p))``); nothing certified here
depends on that order, so no batch is permuted. The batch sizes are fixed by the schedule and
``batch_size`` alone, and a batch never straddles a look (the loop of
:mod:`rdpjax.auditing.sequential.audit` draws ``min(batch_size, n_k − drawn)``), so look ``k`` uses
exactly the outputs of the first batches, whole; and its bound is a function of the per-cell totals
(binned or counted), i.e. of the multiset of those outputs, not of their order (codes of a table are
assigned per batch in sorted order, a relabelling the frequencies do not see). The pilot is a
separate call used whole; where its own order matters (the robust scale and the discrete-or-not
decision look at strided subsamples when the pilot exceeds their size) it only moves settings fixed
before the certifying draws, which is all their validity needs. A sorted sampler therefore gives the
same looks as the unsorted one on the same draws (``tests/sequential/test_sequential.py``).

**Incremental counts.** Each batch is binned once onto the fixed grid (linear binning, the same
kernel as :mod:`rdpjax.stream.blackbox`) or counted (codes), and added to float64 totals: no draw is
redrawn or rebinned; a look costs one bound on the grid, independent of n.
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.auditing.sequential.schedule import Schedule
from rdpjax.estimator.api import DEFAULTS
from rdpjax.estimator.bound_plan import Bound, BoundPlan
from rdpjax.estimator.grid import (
    CELLS_PER_BANDWIDTH,
    KERNEL_RADIUS,
    MAX_GRID_SIZE,
    PAD_QUANTUM,
    Grid,
    bucket_size,
    grid_from_range,
)
from rdpjax.estimator.inputs import check_bandwidth, plan_options
from rdpjax.estimator.settings import discrete_settings, scheduled_settings
from rdpjax.estimator.support import looks_discrete
from rdpjax.stream.batches import batch_counts, bin_batch
from rdpjax.stream.from_counts import bound_from_counts
from rdpjax.stream.pilot import Fixed, Layout, discrete_fixed

__all__ = [
    "DEFAULT_PILOT",
    "MAX_CODES",
    "add_batch",
    "empty_counts",
    "grid_layout_for_looks",
    "look_bound",
    "setup_looks",
]

MAX_CODES = 2**24
"""Codes below this index the counts directly (others go through a table of values); at most
this many distinct discrete outputs (larger alphabets: pass ``project``)."""

DEFAULT_PILOT = 64
"""Outputs per side of the pilot of continuous outputs (drawn once, not certified). Small,
because draws may be expensive: it fixes only the grid's range (outputs beyond the range widened
by half its width on each side are clamped onto its edge, which keeps the bound valid) and the
scale behind the bandwidth and floor schedule."""


def _ceil_to(value: float, quantum: int) -> int:
    return int(-(-math.ceil(value) // quantum) * quantum)


def grid_layout_for_looks(lo, hi, h_fine, h_wide):
    """One grid for every look: ``(shape, pad, lo, hi)``, the interior ``[lo, hi]`` widened.

    Cells of ``h_fine / 16`` (the last look's bandwidth) unless that needs more than
    :data:`rdpjax.estimator.grid.MAX_GRID_SIZE` points; a margin of ``pad`` cells ≥ ``5 h_wide``
    (the first look's kernel), a multiple of 16. The size is rounded up by
    :func:`rdpjax.estimator.grid.bucket_size` and the interior widened symmetrically to fill it,
    so that the layout depends only on the bucket of ``width / h_fine`` and on ``h_wide /
    h_fine`` (fixed by the schedule): audits on other pilots share compiled programs.
    """
    d = len(lo)
    cap = MAX_GRID_SIZE.get(d, 128)
    shape, pad, new_lo, new_hi = [], [], [], []
    for k in range(d):
        width = float(hi[k] - lo[k])
        dx = float(h_fine[k]) / CELLS_PER_BANDWIDTH
        p = _ceil_to(KERNEL_RADIUS * float(h_wide[k]) / dx, PAD_QUANTUM)
        size = bucket_size(math.ceil(width / dx) + 1 + 2 * p)
        if size > cap:  # coarser cells: the margin (in cells) still holds 5 h_wide
            size = max(cap, 2 * p + 2)
            dx = width / (size - 1 - 2 * p)
        extent = (size - 1 - 2 * p) * dx  # ≥ width
        centre = 0.5 * (float(lo[k]) + float(hi[k]))
        shape.append(int(size))
        pad.append(int(p))
        new_lo.append(centre - 0.5 * extent)
        new_hi.append(centre + 0.5 * extent)
    return tuple(shape), tuple(pad), np.asarray(new_lo), np.asarray(new_hi)


def setup_looks(source, schedule: Schedule, options: dict) -> tuple[dict, int]:
    """The settings of every look, fixed before the certifying draws, and the pilot size.

    The settings (module docstring) come as a JSON-ready dict, with the pilot size per side that
    was drawn for them (0: discrete).
    """
    sizes = np.asarray(schedule.sizes, np.float64)
    floor, beta = options.get("floor"), options.get("beta")
    if source.discrete:
        setup = _discrete_setup(sizes, options)
        if getattr(source, "vectors", False):  # vectors of codes: a table of the rows seen
            setup["rows"] = []
        return setup, 0
    pilot = options.get("pilot")
    pilot = DEFAULT_PILOT if pilot is None else check_int(pilot, "pilot", 8)
    margin = float(options.get("margin", 0.5))
    p, q = (np.asarray(a, np.float64) for a in source.pilot(pilot))
    p, q = p.reshape(pilot, -1), q.reshape(pilot, -1)
    if p.shape[1] == 1 and getattr(source, "auto_discrete", False) and looks_discrete(p, q):
        # A few distinct values (point masses, as rdpjax.lower_bound would see them): relative
        # frequencies on a table of the values seen, which grows as new ones appear.
        values = np.unique(np.concatenate([p, q])).tolist()
        return dict(_discrete_setup(sizes, options), values=values), pilot
    d = p.shape[1]
    if not 1 <= d <= 3:
        from rdpjax.auditing.draws import OutputDimensionError

        raise OutputDimensionError(d, "on the pilot, before the looks")
    bandwidth = check_bandwidth(options.get("bandwidth"), d)
    lo, hi = np.minimum(p.min(0), q.min(0)), np.maximum(p.max(0), q.max(0))
    if np.any(hi <= lo):
        raise ValueError(
            "the pilot draw has zero spread: a kernel density needs varied values (for integer "
            "outputs, pass discrete=True)."
        )
    lo, hi = lo - margin * (hi - lo), hi + margin * (hi - lo)
    with float64():
        h, floors, betas = (
            np.asarray(a)
            for a in scheduled_settings(p, q, sizes, bandwidth, floor, beta, defaults=DEFAULTS)
        )
    if not np.all(np.isfinite(h) & (h > 0)):
        raise ValueError(
            "the pilot draw has no spread to scale a bandwidth by (its robust scale is 0); "
            "pass bandwidth= or a larger pilot=."
        )
    shape, pad, lo, hi = grid_layout_for_looks(lo, hi, h.min(0), h.max(0))
    with float64():
        grid = grid_from_range(lo, hi, shape, pad)
    setup = {
        "kind": "continuous",
        "dim": d,
        "shape": list(shape),
        "pad": list(pad),
        "low": np.asarray(grid.low).tolist(),
        "spacing": np.asarray(grid.spacing).tolist(),
        "bandwidth": h.tolist(),
        "floor": floors.tolist(),
        "beta": betas.tolist(),
    }
    return setup, pilot


def _discrete_setup(sizes: np.ndarray, options: dict) -> dict:
    """The settings of every look of relative frequencies: the floor and β at each n_k."""
    if options.get("bandwidth") is not None:
        raise ValueError("bandwidth applies to continuous outputs only.")
    floor, beta = options.get("floor"), options.get("beta")
    with float64():
        settings = [discrete_settings(float(n), floor, beta, DEFAULTS) for n in sizes]
    return {
        "kind": "discrete",
        "floor": [float(f) for f, _ in settings],
        "beta": [float(b) for _, b in settings],
    }


def _codes(setup: dict, out: np.ndarray) -> np.ndarray:
    """Codes of outputs in the growing value table ``setup["values"]``.

    New values are appended in the order they first appear (those of one batch in sorted
    order): a one-to-one relabelling of the outcomes, which the relative frequencies (and so
    the bound) do not depend on. Integers stay integers (exact at any size); other outputs are
    compared as float64.
    """
    flat = np.asarray(out).reshape(-1)
    if flat.dtype.kind not in "biu":
        flat = flat.astype(np.float64)
    values, inverse = np.unique(flat, return_inverse=True)
    table = setup["values"]
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


def _row_codes(setup: dict, out: np.ndarray) -> np.ndarray:
    """Codes of vector outputs ``(m, d)`` in the growing row table ``setup["rows"]``.

    Each distinct row is one outcome, numbered when it is first seen (the new rows of a batch in
    sorted order): a one-to-one relabelling of the joint outcomes, which the relative
    frequencies do not depend on.
    """
    rows = np.asarray(out).reshape(len(out), -1).astype(np.int64)
    table = setup["rows"]
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


def _layout(setup: dict) -> Layout:
    shape, pad = tuple(setup["shape"]), tuple(setup["pad"])
    interior = tuple((p, s - 1 - p) for s, p in zip(shape, pad, strict=True))
    return Layout(discrete=False, shape=shape, interior=interior)


def empty_counts(setup: dict) -> np.ndarray:
    """Zero totals for ``setup``: an empty count vector (discrete), else zero pair rows."""
    if setup["kind"] == "discrete":
        return np.zeros(0, np.float64)
    return np.zeros((math.prod(setup["shape"]) + 1, 2), np.float64)  # bin_accumulator's rows


def add_batch(setup: dict, counts: np.ndarray, outside: float, out: np.ndarray):
    """``(counts, outside)`` after adding one checked batch ``out``.

    Integer outputs (discrete) of any sign and size are counted: codes in ``[0, MAX_CODES)``
    index the counts directly until the first value outside that range; from then on every
    value goes through the table ``setup["values"]`` (:func:`_codes`), which starts with the
    codes used so far on either side (``setup["codes"]``), so the counts already made keep
    their meaning. Either way a value's count is its count: the relabelling is one-to-one and
    the relative-frequency bound is invariant to it, as a fixed-n audit's
    :func:`rdpjax.estimator.support.encode_pair` (an offset, or ``np.unique``) is.
    """
    if setup["kind"] == "discrete":
        if "rows" not in setup and "values" not in setup:
            if out.dtype.kind not in "biu":
                raise ValueError(f"discrete outputs must be integer codes; got {out.dtype}.")
            if out.size and (out.min() < 0 or out.max() >= MAX_CODES):
                # Integers outside [0, MAX_CODES): from now on a table of values, whose first
                # entries are the codes used so far (their counts keep their meaning).
                setup["values"] = list(range(setup.get("codes", 0)))
            elif out.size:
                setup["codes"] = max(setup.get("codes", 0), int(out.max()) + 1)
        if "values" in setup:
            out = _codes(setup, out)
        elif "rows" in setup:
            out = _row_codes(setup, out)
        new = np.bincount(out.astype(np.int64)).astype(np.float64)
        if new.size > counts.size:
            counts = np.concatenate([counts, np.zeros(new.size - counts.size)])
        counts = counts.copy()
        counts[: new.size] += new
        return counts, outside
    x = np.asarray(out, np.float64).reshape(out.shape[0], -1)
    if x.shape[1] != setup["dim"]:
        raise ValueError(f"outputs of dimension {x.shape[1]}; the pilot's had {setup['dim']}.")
    # NaN rows pad the batch to a bucketed length (few compiled binnings); they are neither
    # binned nor counted (rdpjax.estimator.binning.bin_chunk with an interior).
    x = np.concatenate([x, np.full((bucket_size(len(x)) - len(x), x.shape[1]), np.nan)])
    with float64():
        acc, off = bin_batch(
            jnp.asarray(counts),
            jnp.asarray(outside, jnp.float64),
            x,
            np.asarray(setup["low"]),
            np.asarray(setup["spacing"]),
            layout=_layout(setup),
        )
    return np.asarray(acc), float(off)


def look_bound(setup: dict, counts, outside, k: int, n: int, orders, alpha: float, options):
    """The bound of look ``k`` (``n`` outputs per side, orders, level ``alpha``) from the totals.

    It is :meth:`rdpjax.BoundPlan.bound` with the look's scheduled settings.
    """
    discrete = setup["kind"] == "discrete"
    with float64():
        common = plan_options(
            orders,
            alpha=alpha,
            floor=options.get("floor"),
            beta=options.get("beta"),
            discrete=discrete,
            both_directions=options["both_directions"],
            variance=options.get("variance", "autodiff"),
            second_order=options.get("second_order", True),
            defaults=DEFAULTS,
        )
        floor = jnp.asarray(setup["floor"][k], jnp.float64)
        beta = jnp.asarray(setup["beta"][k], jnp.float64)
        if discrete:
            size = bucket_size(max(counts[0].size, counts[1].size, 1))
            padded = [np.pad(c, (0, size - c.size)) for c in counts]
            fixed = discrete_fixed(common, size, floor, beta)
        else:
            layout = _layout(setup)
            shape, pad = layout.shape, tuple(setup["pad"])
            plan = BoundPlan(bandwidth=None, shape=shape, pad=pad, half_width=pad, **common)
            low, spacing = np.asarray(setup["low"]), np.asarray(setup["spacing"])
            grid = Grid(low=jnp.asarray(low), spacing=jnp.asarray(spacing), shape=shape)
            padded = [
                np.asarray(batch_counts(jnp.asarray(c), low, spacing, layout=layout))
                for c in counts
            ]
            fixed = Fixed(
                plan=plan,
                layout=layout,
                grid=grid,
                low=low,
                spacing=spacing,
                bandwidth=jnp.asarray(setup["bandwidth"][k], jnp.float64),
                floor=floor,
                beta=beta,
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the outside mass is reported once, by the caller
            bound: Bound = bound_from_counts(
                fixed, tuple(padded), tuple(outside), (n, n), outside="clip", stacklevel=2
            )
    return jax.tree.map(np.asarray, bound)
