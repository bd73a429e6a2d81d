"""What is fixed before the draws, shared with :class:`rdpjax.stream.BlackBox`.

Argument checks, and the pilot → plan/grid step (:func:`fix_settings`), which fixes every shape
and setting before the certifying draws exist: the pilot is the stream's
:class:`~rdpjax.estimator.planner.Evidence`, from which the one planner
(:func:`rdpjax.estimator.planner.plan_draws`) makes its
:class:`~rdpjax.estimator.planner.DrawPlan` (with the :class:`~rdpjax.estimator.planner.Layout`
a chunk is binned onto). The grid range is the user's ``grid=(low, high)`` or a pilot draw's
range widened by ``margin`` widths on each side; the default bandwidth and floor
(:class:`rdpjax.Defaults`) use the pilot's pooled robust scale and the full n; discrete codes use
the support ``[0, support_size)``. The step after the draws, counts → bound, is
:mod:`rdpjax.stream.from_counts`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from rdpjax._validation import check_int
from rdpjax.estimator.inputs import check_bandwidth, check_grid_size
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.planner import DrawPlan, Evidence, PilotScale, plan_draws
from rdpjax.stream.options import StreamOptions


def check_sizes(n) -> tuple[int, int]:
    """``(n_p, n_q)`` from an int ≥ 2 (both sides) or a pair of them; ``ValueError`` otherwise."""
    if isinstance(n, tuple | list):
        if len(n) != 2:
            raise ValueError(f"n must be an int or a pair (n_p, n_q); got {n!r}.")
        return check_int(n[0], "n", 2), check_int(n[1], "n", 2)
    n = check_int(n, "n", 2)
    return n, n


def _check_range(grid, d: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        low, high = grid
        lo = np.broadcast_to(np.asarray(low, np.float64), (d,)).copy()
        hi = np.broadcast_to(np.asarray(high, np.float64), (d,)).copy()
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"grid must be a range (low, high) of numbers or {d}-vectors; got {grid!r}."
        ) from err
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)):
        raise ValueError(f"grid must satisfy low < high, both finite; got {grid!r}.")
    return lo, hi


def streamable(options: BoundOptions) -> BoundOptions:
    """``options`` for a stream, which bins draws it never holds: no pilot quantile map.

    ``transform="auto"`` resolves to no map; ``"quantile"`` is a ``ValueError``.
    """
    if options.transform == "quantile":
        raise ValueError(
            "transform='quantile' needs the draws in memory (rdpjax.lower_bound); a streamed "
            "bound bins the draws as they come."
        )
    return options if options.transform is None else dataclasses.replace(options, transform=None)


def fix_settings(
    draw_pilot: Callable[[], tuple[np.ndarray, np.ndarray]],
    lam,
    *,
    kind: tuple[bool, int],
    sizes: tuple[int, int],
    alpha: float,
    both_directions: bool,
    options: BoundOptions,
    stream: StreamOptions,
) -> DrawPlan:
    """The pilot → plan/grid step shared by the streamed and the black-box bounds.

    See :mod:`rdpjax.stream` (grid and settings). ``draw_pilot()`` returns the two pilot draws
    (numpy); it is called only when a setting needs them. ``kind`` is ``(integer, d)`` of the
    outputs, ``sizes`` the draws ``(n_p, n_q)``. Runs inside ``rdpjax.float64()``.
    """
    (integer, d), (n_p, n_q) = kind, sizes
    discrete, bandwidth = options.discrete, options.bandwidth
    grid, margin, support_size = stream.grid, stream.margin, stream.support_size
    grid_size = options.grid_size
    if discrete is None:
        discrete = integer
    if discrete and not integer:
        raise ValueError("discrete=True needs samplers returning integer codes.")
    if support_size is not None and not discrete:
        raise ValueError("support_size is for discrete codes; not with discrete=False.")
    common = options.plan_options(
        lam, alpha=alpha, both_directions=both_directions, discrete=bool(discrete)
    )
    floor, beta = common["floor"], common["beta"]
    sizes = (min(n_p, n_q),)
    if discrete:
        if bandwidth is not None:
            raise ValueError("bandwidth applies to continuous data only.")
        low = 0
        if support_size is None:
            # The pilot's codes; negative integers (a noisy count) are counted from the pilot's
            # least, a fixed shift (codes below it are clamped onto it, as above its largest).
            codes = np.concatenate(draw_pilot())
            low = min(int(codes.min()), 0)
            size = int(codes.max()) - low + 1
        else:
            size = check_int(support_size, "support_size", 1)
        # Clamped under "raise" too (it raises on any clamped draw): one compiled stream.
        evidence = Evidence(discrete=True, support=(low, size))
        return plan_draws(evidence, sizes, options, floor=floor, beta=beta).with_bound(common)
    if d > 3:
        raise ValueError(f"continuous outputs must have dimension d ≤ 3; got d = {d}.")
    bandwidth = check_bandwidth(bandwidth, d)
    check_grid_size(grid_size)
    needs_pilot = grid is None or bandwidth is None or floor is None
    pilot_p = pilot_q = None
    if needs_pilot:
        pilot_p, pilot_q = (x.reshape(x.shape[0], -1).astype(np.float64) for x in draw_pilot())
        for side, x in (("x (P, sample_p)", pilot_p), ("x' (Q, sample_q)", pilot_q)):
            if not np.all(np.isfinite(x)):
                bad = int(np.count_nonzero(~np.all(np.isfinite(x), axis=1)))
                raise ValueError(
                    f"the mechanism returned {bad:,} non-finite (NaN or infinite) outputs on "
                    f"{side} in the pilot draw (of {len(x):,}); a mechanism's outputs must be "
                    "finite."
                )
    if grid is None:
        lo = np.minimum(pilot_p.min(0), pilot_q.min(0))
        hi = np.maximum(pilot_p.max(0), pilot_q.max(0))
        if np.any(hi <= lo):
            raise ValueError(
                "the pilot draw has zero spread: a kernel density needs varied values "
                "(pass discrete=True for integer outputs, or grid=(low, high))."
            )
        width = hi - lo
        lo, hi = lo - margin * width, hi + margin * width
    else:
        lo, hi = _check_range(grid, d)
        if stream.outside == "raise" and pilot_p is not None:
            pooled = np.concatenate([pilot_p, pilot_q])
            if np.any(pooled < lo) or np.any(pooled > hi):
                raise ValueError(
                    f"grid=({lo.tolist()}, {hi.tolist()}) does not cover the pilot draw "
                    f"(range {pooled.min(0).tolist()} to {pooled.max(0).tolist()})."
                )
    # every setting given: the scale is not needed
    scale = None if pilot_p is None else PilotScale(pilot_p, pilot_q)
    evidence = Evidence(discrete=False, span=(lo, hi), scale=scale)
    drawn = plan_draws(evidence, sizes, options, bandwidth=bandwidth, floor=floor, beta=beta)
    return drawn.with_bound(common, bandwidth=bandwidth)
