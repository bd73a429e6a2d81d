"""Samples in memory, from the arrays to the plan and the samples on the device.

The samples are checked, then come the discrete/continuous decision, the codes or the quantile
map, and the copy to the device; what the samples show before they are binned (their range and
strided subsample, or their codes) is their :class:`~rdpjax.estimator.planner.Evidence`, and the
one planner (:func:`rdpjax.estimator.planner.plan_draws`) fixes the settings and the grid layout
from it, as it does for a stream's pilot and a sequential audit's.

:func:`plan_samples` serves :func:`rdpjax.plan_bound` (unpadded samples, for studies that call
the plan on their own draws) and :func:`rdpjax.lower_bound` (samples padded to a bucketed length,
so that compiled programs are reused; :mod:`rdpjax.estimator.api`). Everything that fixes an
array shape is decided here, before anything is traced.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from rdpjax._internal.buffers import to_device
from rdpjax._internal.sharding import AXIS
from rdpjax._typing import ArrayLike
from rdpjax.estimator import support as _discrete
from rdpjax.estimator.bound_plan import BoundPlan
from rdpjax.estimator.device_map import MappedRest, map_rest, rest_size
from rdpjax.estimator.grid import bucket_size, check_layout
from rdpjax.estimator.inputs import (
    as_samples,
    check_bandwidth,
    finite_extremes,
    to_device_with_extremes,
)
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.planner import DrawPlan, Evidence, SubsampleScale, plan_draws
from rdpjax.estimator.settings import scale_subsample
from rdpjax.estimator.transform import TRANSFORMS, auto_transform, fit_pilot_map

MIN_PADDED_ROWS = 2**15
"""The fewest rows :func:`rdpjax.lower_bound` pads a sample to (else :func:`bucket_size` of n).

Every sample of up to 32,768 outputs shares one padded length, so the binning compiles once per grid
layout for all of them instead of once per pair of size buckets (about a hundred microseconds of
binning the padding rows, which are not counted). ``benchmarks/performance/many_datasets.py``:
250 data sets of 1,000–20,000 a side compiled 15 programs in all (54 with size buckets alone)."""


def padded_rows(n: int) -> int:
    """Rows a sample of ``n`` is padded to by :func:`rdpjax.lower_bound`."""
    return max(bucket_size(n), MIN_PADDED_ROWS)


__all__ = ["Planned", "plan_samples"]


def _split(mesh: Mesh | None, rows: int) -> NamedSharding | None:
    """Rows split over ``mesh``'s devices, when it has several and they divide ``rows``."""
    if mesh is None or mesh.size == 1 or rows % mesh.size:
        return None
    return NamedSharding(mesh, PartitionSpec(AXIS))


class Planned(NamedTuple):
    """What :func:`plan_samples` fixed: the :class:`DrawPlan` and the samples on the device.

    The samples are padded or not; with them come their real sizes and the map applied
    (``"auto"`` resolved: ``None`` or ``"quantile"``). The plan's settings ``(h, τ, β)`` are
    resolved from the samples' subsamples; its span is the pooled per-axis ``(min, max)`` of
    the continuous samples, taken on the host.
    """

    draws: DrawPlan
    p: jax.Array
    q: jax.Array
    n_p: int
    n_q: int
    transform: str | None = None

    @property
    def plan(self) -> BoundPlan:
        """The :class:`BoundPlan` (orders, level, the grid's static layout)."""
        assert self.draws.plan is not None
        return self.draws.plan


def plan_samples(
    p_samples: ArrayLike,
    q_samples: ArrayLike,
    lam: ArrayLike | Sequence[float],
    *,
    pad: bool,
    alpha: float,
    both_directions: bool,
    options: BoundOptions,
    support_size: int | None = None,
    mesh: Mesh | None = None,
) -> Planned:
    """Samples in memory planned for :func:`plan_bound`, padded (``pad``) and placed (``mesh``).

    With ``pad`` the samples are padded to :func:`bucket_size` rows (NaN rows, or the
    out-of-support code) for :meth:`BoundPlan.bin_padded`; with ``mesh`` continuous samples are
    placed split over its devices, where ``bin_padded`` bins them.
    """
    discrete, bandwidth = options.discrete, options.bandwidth
    floor, beta = options.floor, options.beta
    grid_size = options.grid_size
    layout, transform, defaults = options.layout, options.transform, options.defaults
    p = as_samples(p_samples, "p_samples")
    q = as_samples(q_samples, "q_samples")
    names = ("p_samples", "q_samples")
    # Floating samples bound by their own KDE have their extremes (and finiteness) taken while
    # they are copied to jax, in one pass (inputs.to_device_with_extremes); every other path
    # checks them here first, before looking at their values.
    extremes = None
    if p.dtype.kind != "f" or q.dtype.kind != "f" or discrete or support_size is not None:
        extremes = [finite_extremes(x, name) for x, name in zip((p, q), names, strict=True)]
    if p.ndim != q.ndim or p.shape[1:] != q.shape[1:]:
        raise ValueError(
            "p_samples and q_samples must have the same dimension; "
            f"got shapes {p.shape} and {q.shape}."
        )
    check_layout(layout)
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {TRANSFORMS}; got {transform!r}.")
    if support_size is not None:
        if discrete is False:
            raise ValueError("support_size is for discrete codes; not with discrete=False.")
        discrete = True
    if discrete is None:
        discrete = _discrete.looks_discrete(p, q)  # on a strided subsample; NaN is one value
        if not discrete and p.dtype.kind in "iu" and p.ndim == 1:
            warnings.warn(
                f"integer outputs with more than {_discrete.MAX_CATEGORIES} distinct values "
                "are treated as ordinal "
                "(noisy counts: smoothed along their order by the KDE); pass discrete=True "
                "(--discrete) if they are codes of unordered categories, discrete=False "
                "(--continuous) to silence this.",
                stacklevel=3,
            )
    if transform == "auto":  # only the outputs' own KDE takes settings in data units
        custom = any(v is not None for v in (bandwidth, floor, beta, grid_size))
        transform = None if discrete or custom else auto_transform(p, q)
    if extremes is None and discrete:
        extremes = [finite_extremes(x, name) for x, name in zip((p, q), names, strict=True)]
    mapped: list[MappedRest] | None = None
    if transform is not None:
        if discrete:
            raise ValueError(
                f"transform={transform!r} applies to continuous outputs and these are "
                "discrete (pass discrete=False to treat them as continuous)."
            )
        # Fitted on pilot rows set aside, applied to the rest on the device
        # (rdpjax.estimator.transform, rdpjax.estimator.device_map).
        mapped = _mapped(p, q, pad, mesh, options.defaults.scale_points)
    n_p, n_q = (len(p), len(q)) if mapped is None else (mapped[0].n, mapped[1].n)
    rows_p, rows_q = (padded_rows(n_p), padded_rows(n_q)) if pad else (n_p, n_q)
    common = options.plan_options(
        lam, alpha=alpha, both_directions=both_directions, discrete=bool(discrete)
    )
    floor, beta = common["floor"], common["beta"]
    if discrete:
        if bandwidth is not None:
            raise ValueError("bandwidth applies to continuous data only; discrete=True was chosen.")
        if support_size is not None:
            size = int(support_size)
            for name, c in (("p_samples", p), ("q_samples", q)):
                if c.dtype.kind not in "biu" or c.ndim != 1 or c.min() < 0 or c.max() >= size:
                    raise ValueError(
                        f"with support_size={size}, {name} must be 1-D integer codes "
                        f"in [0, {size})."
                    )
            codes_p, codes_q = p.astype(np.int32), q.astype(np.int32)
        else:
            codes_p, codes_q, support = _discrete.encode_pair(p, q)
            # The support padded like the samples (bucketed layout): codes past the observed
            # ones count nothing in either sample, and a cell empty in both adds nothing to the
            # divergence, its variance or its second-order terms (every term has a factor p̂ or
            # a weight p̂^λ), so data sets of nearby support sizes share one compiled bound.
            size = bucket_size(len(support)) if layout == "bucketed" else len(support)
        draws = plan_draws(
            Evidence(discrete=True, support=(0, size)), (min(n_p, n_q),), options,
            floor=floor, beta=beta,
        ).with_bound(common)  # fmt: skip
        codes_p = to_device(codes_p, np.int32, rows_p, fill=size)  # padding: not counted
        codes_q = to_device(codes_q, np.int32, rows_q, fill=size)
        return Planned(draws, codes_p, codes_q, n_p, n_q)

    p2 = p.reshape(len(p), -1)
    q2 = q.reshape(len(q), -1)
    d = p2.shape[1]
    if d > 3:
        raise ValueError(
            f"continuous samples must have dimension d ≤ 3 (got d = {d}); project them first."
        )
    if mapped is None:
        pj, qj, extremes = _placed(p2, q2, (rows_p, rows_q), extremes, mesh)
        points = defaults.scale_points
        (sub_p, m_p), (sub_q, m_q) = scale_subsample(p2, points), scale_subsample(q2, points)
    else:  # the mapped rows are on the device already, with their extremes and subsamples
        pj, qj = mapped[0].rows, mapped[1].rows
        extremes = [m.extremes for m in mapped]
        (sub_p, m_p), (sub_q, m_q) = (m.subsample for m in mapped)
    for name, (x_min, x_max) in zip(names, extremes, strict=True):
        spread = x_max - x_min
        if np.any(spread <= 0):
            raise ValueError(
                f"{name} has zero spread along axis {int(np.argmin(spread))}: a kernel density "
                "needs varied values (pass discrete=True if the output is discrete)."
            )
    bandwidth = check_bandwidth(bandwidth, d)
    # The settings from the samples' strided subsamples, padded to bucketed lengths: one
    # compiled program per pair of subsample buckets, not per n (run eagerly it compiled about
    # eight small programs, the sort's bit flips, std, …, for every new n, and kept them).
    if transform is not None:
        options = dataclasses.replace(options, defaults=defaults.for_map(d))
    (p_min, p_max), (q_min, q_max) = extremes
    span = np.minimum(p_min, q_min), np.maximum(p_max, q_max)
    evidence = Evidence(discrete=False, span=span, scale=SubsampleScale(sub_p, m_p, sub_q, m_q))
    draws = plan_draws(
        evidence, (min(n_p, n_q),), options, bandwidth=bandwidth, floor=floor, beta=beta,
        lay_grid=False,
    ).with_bound(common, bandwidth=bandwidth)  # fmt: skip
    return Planned(draws, pj, qj, n_p, n_q, transform)


def _placed(
    p2: np.ndarray,
    q2: np.ndarray,
    rows: tuple[int, int],
    extremes: list[tuple[np.ndarray, np.ndarray]] | None,
    mesh: Mesh | None,
) -> tuple[jax.Array, jax.Array, list[tuple[np.ndarray, np.ndarray]]]:
    """Both samples on the device, NaN-padded to ``rows``, and their extremes (taken if None).

    float32 samples stay float32 on the device (half the copy and the reads; the binning
    converts each chunk to float64 exactly); every other dtype becomes float64.
    """
    dtype = np.float32 if p2.dtype == q2.dtype == np.float32 else np.float64
    placed: list[jax.Array] = []
    taken: list[tuple[np.ndarray, np.ndarray]] = []  # extremes taken while copying
    for x, name, n_rows in zip((p2, q2), ("p_samples", "q_samples"), rows, strict=True):
        sharding = _split(mesh, n_rows)  # NaN padding: off every grid
        if extremes is None:
            xj, x_extremes = to_device_with_extremes(x, name, dtype, n_rows, np.nan, sharding)
            taken.append(x_extremes)
        else:
            xj = to_device(x, dtype, n_rows, fill=np.nan, sharding=sharding)
        placed.append(xj)
    return placed[0], placed[1], taken if extremes is None else extremes


def _mapped(
    p: np.ndarray, q: np.ndarray, pad: bool, mesh: Mesh | None, points: int
) -> list[MappedRest]:
    """Both samples checked and put on the device, ``T`` fitted on their pilots, the rest mapped.

    The samples go to the device as float64 (the map's precision), their finiteness checked
    during that copy (:func:`to_device_with_extremes`), before the pilot is read.
    """
    p2, q2 = p.reshape(len(p), -1), q.reshape(len(q), -1)
    samples = ((p2, "p_samples"), (q2, "q_samples"))
    rows_in = [padded_rows(len(x)) if pad else len(x) for x, _ in samples]
    raw = [
        to_device_with_extremes(x, name, np.float64, rows, np.nan)[0]
        for (x, name), rows in zip(samples, rows_in, strict=True)
    ]
    qmap = fit_pilot_map(p2, q2, stacklevel=5)
    out: list[MappedRest] = []
    for (x, _), xj in zip(samples, raw, strict=True):
        m = rest_size(len(x))
        rows = padded_rows(m) if pad else m
        mapped = map_rest(x, qmap, rows=rows, points=points, placed=xj)
        layout = _split(mesh, rows)  # binned split over the devices, as _placed lays out
        out.append(
            mapped if layout is None else mapped._replace(rows=jax.device_put(mapped.rows, layout))
        )
    return out
