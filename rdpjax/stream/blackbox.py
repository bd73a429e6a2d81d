"""Bounds from a numpy black box at any n, in memory O(batch + grid).

:func:`rdpjax.lower_bound` takes samples that already exist; a black box ``sample(rng,
database, m)`` (numpy code, or another library's DP mechanism, called with a
``numpy.random.Generator``) drawn at n = 1e8 per side would hold 1.6 GB of float64 outputs
before the bound starts. :func:`blackbox_bound` never holds more than a few batches: it draws
``batch_size`` outputs per side at a time, bins each batch on a grid fixed beforehand (the
jitted kernels of :mod:`rdpjax.estimator.binning`), accumulates float64 counts, and computes
eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3 from the two histograms
(:meth:`rdpjax.BoundPlan.bound`), exactly as :func:`rdpjax.lower_bound`'s plan machinery does on
the same samples binned on the same grid with the same settings. It is the black-box twin of
:func:`rdpjax.stream.streamed_bound` (JAX samplers drawn inside one compiled scan) and shares
its pilot → grid/settings step and its counts → bound step.

**Draws.** ``np.random.SeedSequence(key_data)`` (the ``uint32`` words of
``jax.random.key_data(key)``) is spawned into three children, which seed
``numpy.random.default_rng`` Generators ``g_pilot, g_p, g_q``. The pilot is ``sample(g_pilot, x,
pilot)`` then ``sample(g_pilot, x', pilot)``; side P is ``sample(g_p, x, m_i)`` for the batch
sizes ``m_i = min(batch_size, n_p − drawn)`` in turn (likewise Q from ``g_q`` on x'), P and Q
batches interleaved (each side's Generator sees only its own calls, so the interleaving changes
nothing).

**Grid and settings.** They must be fixed before the certifying samples exist (the data-
independence a valid bound needs), so they come from the pilot only, which is not reused in the
bound: the pilot's range widened by ``margin`` times its width on each side, the default
bandwidth and floor (:class:`rdpjax.Defaults`) from the pilot's pooled robust scale and the
*full* n. Integer (or bool) outputs are discrete codes on the support ``[0, support_size)``
(default: the pilot's largest code + 1); floats are continuous, d ≤ 3 (vectors of higher
dimension need ``project``, a fixed function applied to every batch, pilot included, before
binning: a bound on a fixed function of the outputs is still a bound, by data processing).

**Outside mass.** Outputs off the grid range (codes off the support) are clamped onto its edge,
a fixed map (valid by data processing), counted in ``Bound.outside`` and warned about; never
dropped. ``outside="raise"`` raises instead, as soon as a batch has such an output.

Cost: the draws, plus O(n · 2^d) for the binning, which runs on jax's runtime thread while the
next batch is drawn (dispatch is asynchronous; at most two batches are in flight), plus O(L · g
log g) for the bound. Memory O(batch_size · d + g). The binning kernel is compiled once per
batch shape and dtype: twice when ``batch_size`` does not divide n.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from rdpjax._precision import float64
from rdpjax.estimator.grid import check_layout
from rdpjax.estimator.inputs import check_grid_size, plan_options
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.plan import Bound
from rdpjax.stream.batches import (
    batch_counts,
    bin_batch,
    checked_outputs,
    empty_carry,
    generators,
)
from rdpjax.stream.options import DEFAULT_BATCH, StreamOptions, split_options
from rdpjax.stream.plan import bound_from_counts, check_sizes, fix_settings, streamable

__all__ = ["DEFAULT_BATCH", "blackbox_bound"]

_IN_FLIGHT = 2
"""Batches dispatched to the binning kernel and not yet binned, at most (bounds the memory)."""


def _kind(out: np.ndarray) -> tuple[bool, tuple[int, ...]]:
    return out.dtype.kind in "biu", out.shape[1:]


def blackbox_bound(
    sample: Callable,
    key,
    x,
    x_prime,
    lam,
    *,
    n,
    alpha: float = 0.05,
    both_directions: bool = False,
    options: BoundOptions | None = None,
    stream: StreamOptions | None = None,
    **fields: Any,
) -> Bound:
    """A lower bound on ``D_λ(A(x) ‖ A(x'))`` from a numpy black box, at any n per side.

    Eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, as :func:`rdpjax.lower_bound`,
    with the densities (9)/(10) estimated from histograms accumulated batch by batch on a grid
    fixed by a pilot draw (module docstring: draws, grid, outside mass). Departs from
    :func:`rdpjax.lower_bound` only in the grid: fixed from the pilot instead of the data's own
    range (outputs beyond it are clamped), and in 1-D the binning rounds each cell fraction to
    :func:`rdpjax.estimator.binning.packing` bits (a fixed kernel too). Memory
    O(batch_size · d + grid): a numpy Gaussian at n = 1e8 per side peaks well under 1 GB
    (``benchmarks/performance/audit_memory.py``).

    Args:
      sample: ``sample(rng, database, m)`` returning ``m`` outputs, shape ``(m,)`` or ``(m,
        d)``: floats (continuous) or integer / bool codes (discrete), with ``rng`` a
        ``numpy.random.Generator``. Must return a new array on each call (not a buffer it
        reuses: the binning of one batch may still be reading it while the next is drawn).
      key: a ``jax.random`` key; the only source of randomness (module docstring).
      x: the first of the adjacent databases, passed to ``sample`` as it is.
      x_prime: the second, adjacent to ``x``, passed the same way.
      lam: an order λ > 1 or a sequence of orders.
      n: outputs per side (int ≥ 2), or a pair ``(n_p, n_q)``.
      alpha: family-wise error level in (0, 0.5), as in :func:`rdpjax.lower_bound`.
      both_directions: also bound ``D_λ(Q‖P)`` and report, per λ, the larger bound.
      options: the estimator's :class:`rdpjax.BoundOptions`; ``discrete=None`` decides from the
        pilot's dtype (integers or bools → relative frequencies), ``True`` needs integer codes,
        ``False`` forces a KDE; the bandwidth and floor default from the pilot and the full n;
        no quantile map.
      stream: the :class:`~rdpjax.stream.options.StreamOptions`: ``batch_size`` (outputs per
        call of ``sample``), ``pilot`` (outputs per side of the pilot draw that fixes the grid,
        the discrete/continuous decision and the default bandwidth and floor; not reused in the
        bound), ``margin``, ``grid``, ``support_size`` (default the pilot's largest code + 1;
        larger codes are then clamped and counted), ``outside``, ``project`` (a fixed function
        applied to every batch and the pilot before binning, arrays ``(m, ...)`` in, ``(m,)``
        or ``(m, d ≤ 3)`` out; needed for outputs of more than three dimensions) and
        ``progress`` (called after each batch with the outputs drawn so far over both sides
        and ``total = n_p + n_q``).
      **fields: fields of either options object by name (``batch_size=…``,
        ``second_order=…``), which replace those of ``options`` and ``stream``; any other name
        is a ``TypeError``.

    Returns:
      A :class:`rdpjax.Bound` (numpy leaves); ``outside`` holds the numbers of outputs clamped
      onto the edge of the range.

    Raises:
      ValueError: for invalid options; for a batch of the wrong length, shape, dtype or
        dimension (other than the pilot's), d > 3 without ``project``, or non-finite outputs
        (naming how many); with ``outside="raise"``, for outputs off the range.

    Example:
      >>> import jax, numpy as np
      >>> from rdpjax.stream.blackbox import blackbox_bound
      >>> def noisy_sum(rng, db, m):
      ...     return np.sum(db) + 5.0 * rng.standard_normal(m)
      >>> b = blackbox_bound(noisy_sum, jax.random.key(0), np.array([1.0, 0.0]),
      ...                    np.zeros(2), [2.0, 5.0], n=10**6)
      >>> bool((b.lower <= [0.04, 0.10]).all())
      True
    """
    if not callable(sample):
        raise ValueError(f"sample must be callable as sample(rng, database, m); got {sample!r}.")
    options, stream = split_options(options, stream, fields, caller="blackbox_bound")
    options = streamable(options)
    check_layout(options.layout)
    n_p, n_q = check_sizes(n)
    batch_size, pilot, project = stream.batch_size, stream.pilot_size, stream.project
    outside, progress = stream.outside, stream.progress
    g_pilot, g_p, g_q = generators(key)
    with float64():
        # Cheap checks before the (possibly slow) black box is called at all.
        plan_options(
            lam,
            alpha=alpha,
            floor=options.floor,
            beta=options.beta,
            discrete=False,
            both_directions=both_directions,
            variance=options.variance,
            second_order=options.second_order,
            defaults=options.defaults,
        )
        check_grid_size(options.grid_size)
        pilots = (
            checked_outputs(sample, g_pilot, x, pilot, project, "x (pilot)"),
            checked_outputs(sample, g_pilot, x_prime, pilot, project, "x' (pilot)"),
        )
        kinds = [_kind(a) for a in pilots]
        if kinds[0] != kinds[1]:
            raise ValueError(
                "sample must return the same kind of output on x and x'; got (integer, shape) "
                f"= {kinds[0]} and {kinds[1]} in the pilot draw."
            )
        integer, tail = kinds[0]
        d = tail[0] if tail else 1
        is_discrete = integer if options.discrete is None else bool(options.discrete)
        if is_discrete and tail:
            raise ValueError(
                f"discrete outputs must be integer codes of shape (m,); got (m, {d}): pass "
                "project=, a fixed function mapping each output to one integer code."
            )
        if not is_discrete and not 1 <= d <= 3:
            raise ValueError(
                f"continuous outputs must have dimension 1 ≤ d ≤ 3; got d = {d}: pass project=, "
                "a fixed function mapping a batch to (m,) or (m, d ≤ 3)."
            )
        fixed = fix_settings(
            lambda: pilots,
            lam,
            kind=(integer, d),
            sizes=(n_p, n_q),
            alpha=alpha,
            both_directions=both_directions,
            options=options,
            stream=stream,
        )
        sides = [
            dict(rng=g_p, database=x, n=n_p, drawn=0, name="x (P)", carry=empty_carry(fixed)),
            dict(
                rng=g_q, database=x_prime, n=n_q, drawn=0, name="x' (Q)", carry=empty_carry(fixed)
            ),
        ]
        in_flight: collections.deque = collections.deque()  # (side, carry) pairs

        def check_outside(name: str, carry) -> None:
            off = int(float(carry[1]))
            if outside == "raise" and off:
                raise ValueError(
                    f"{off} outputs on {name} fell outside the grid range or support fixed by "
                    "the pilot; pass a larger margin= (or support_size=) or outside='clip'."
                )

        total = n_p + n_q
        while any(s["drawn"] < s["n"] for s in sides):
            for s in sides:
                if s["drawn"] == s["n"]:
                    continue
                m = min(batch_size, s["n"] - s["drawn"])
                out = checked_outputs(sample, s["rng"], s["database"], m, project, s["name"])
                if _kind(out) != (integer, tail):
                    raise ValueError(
                        f"sample returned outputs of (integer, shape) = {_kind(out)} on "
                        f"{s['name']}, but {(integer, tail)} in the pilot draw."
                    )
                if not is_discrete and out.ndim == 1:
                    out = out[:, None]
                s["carry"] = bin_batch(
                    *s["carry"], out, fixed.low, fixed.spacing, layout=fixed.layout
                )
                del out
                s["drawn"] += m
                in_flight.append((s["name"], s["carry"]))
                if len(in_flight) > _IN_FLIGHT:  # wait for the binning to catch up
                    name, carry = in_flight.popleft()
                    jax.block_until_ready(carry)
                    check_outside(name, carry)
                if progress is not None:
                    progress(sides[0]["drawn"] + sides[1]["drawn"], total)
        carries = [s["carry"] for s in sides]
        for s in sides:
            check_outside(s["name"], s["carry"])
        counts = [
            np.asarray(batch_counts(c[0], fixed.low, fixed.spacing, layout=fixed.layout))
            for c in carries
        ]
        return bound_from_counts(
            fixed,
            tuple(counts),
            tuple(np.asarray(c[1]) for c in carries),
            (n_p, n_q),
            outside=outside,
            stacklevel=2,
        )
