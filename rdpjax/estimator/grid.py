"""The uniform grid on which continuous densities are estimated.

A :class:`Grid` is a pytree: ``low`` and ``spacing`` are array leaves (so a grid whose range is
computed from traced data works under ``jit`` and ``vmap``), ``shape`` is static.

The grid covers the pooled data range plus a margin of ``pad`` cells on every side, and ``pad``
is chosen so that the truncated kernel (radius :data:`KERNEL_RADIUS` bandwidths) fits inside the
margin: the binned-and-smoothed mass of both samples then lies entirely on the grid, and the
estimated pmfs on the grid sum to one exactly.

Spacing rule: the cell width is at most ``bandwidth / cells``, ``cells`` by dimension
(:data:`CELLS_PER_BANDWIDTH_BY_DIM`: 16 in 1-D, 4 in 2-D, 2 in 3-D). With linear binning the error
of the binned KDE is O((Δ/h)²) relative to the density: at Δ = h/16 it is below 1e-4 of the peak,
at the 2-D default about 2e-3 (measured in ``tests/estimator/test_kde.py`` against the direct
KDE), which left the 2-D bound's coverage and tightness where 16 cells put them
(docs/calibration.md).

Layout policy (:func:`plan_layout`): ``"exact"`` sizes the grid to the data as above;
``"bucketed"`` rounds the size up to one of four sizes per octave (:func:`bucket_size`) and the
margin up to a multiple of 16 cells, so that data sets of other ranges and sizes share one grid
shape, hence one compiled bound.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from rdpjax._pytree import pytree_dataclass
from rdpjax._typing import Array, ArrayLike

__all__ = [
    "CELLS_PER_BANDWIDTH",
    "CELLS_PER_BANDWIDTH_BY_DIM",
    "KERNEL_RADIUS",
    "MAX_GRID_POINTS",
    "MAX_GRID_SIZE",
    "PAD_QUANTUM",
    "Grid",
    "grid_layout",
    "grid_from_range",
    "LAYOUTS",
    "bucket_size",
    "kernel_half_width",
    "plan_layout",
]

KERNEL_RADIUS = 5.0
"""The Gaussian kernel is cut at ±5 bandwidths (total width 10h ≥ the 8h asked for)."""

CELLS_PER_BANDWIDTH = 16
"""Default number of grid cells per bandwidth along each axis in 1-D."""

CELLS_PER_BANDWIDTH_BY_DIM = {1: CELLS_PER_BANDWIDTH, 2: 4, 3: 2}
"""Default cells per bandwidth along each axis, by dimension. The grid has ``(h/Δ)^d`` points
per bandwidth cube: in 2-D, 4 cells gave the coverage and tightness of 16 (to two decimals)
with a grid 16× smaller and studies 8× faster (R = 200, n = 10^4 and 10^5,
``benchmarks/calibration/calibrate_multid.py``, docs/calibration.md); the KDE is then within 2e-3 of
the peak of the direct KDE (``tests/estimator/test_kde.py``). In 3-D, 2 cells gave the
coverage of 3 (1.000, R = 200, n = 10^4, Gaussian and Laplace vector sums) and its mean
lower/exact to within 0.011 (docs/calibration.md), on grids 2.9–3.2× smaller; 16 (the earlier
3-D default) hit the 200-point cap of :data:`MAX_GRID_SIZE` on every axis. Coarser cells
cannot make the bound invalid: the binned KDE is a post-processing of the data whatever Δ
(:mod:`rdpjax.estimator.kde`)."""

MAX_GRID_SIZE = {1: 2**18, 2: 1024, 3: 200}
"""Largest default number of grid points per axis, by dimension (memory O(size^d))."""

MAX_GRID_POINTS = 2**24
"""Most grid points over all axes: each of the bound's arrays holds a float64 a point, 128 MB at
this size. The default sizes stay below it (:data:`MAX_GRID_SIZE`) unless the bandwidth is far
above the data range; a given ``grid_size`` may ask for up to it."""


@pytree_dataclass(static=("shape",))
class Grid:
    """A uniform grid in d = 1, 2 or 3 dimensions.

    Attributes:
      low: ``(d,)`` coordinates of the first grid point.
      spacing: ``(d,)`` cell widths Δ.
      shape: number of points per axis (static).
    """

    low: Array
    spacing: Array
    shape: tuple[int, ...]

    @property
    def dim(self) -> int:
        """The number of dimensions d, ``len(shape)``."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The total number of grid points, the product of ``shape``."""
        return math.prod(self.shape)

    @property
    def cell_volume(self) -> Array:
        """Volume Δ_1 ⋯ Δ_d of one cell: the weight of a grid point in a Riemann sum."""
        return jnp.prod(self.spacing)

    def axes(self) -> list[Array]:
        """The 1-D coordinate vector of each axis."""
        dtype = self.spacing.dtype
        return [
            self.low[k] + self.spacing[k] * jnp.arange(s).astype(dtype)
            for k, s in enumerate(self.shape)
        ]

    def points(self) -> Array:
        """All grid points, shape ``(*shape, d)``."""
        return jnp.stack(jnp.meshgrid(*self.axes(), indexing="ij"), axis=-1)


def grid_from_range(
    data_min: ArrayLike, data_max: ArrayLike, shape: tuple[int, ...], pad: tuple[int, ...]
) -> Grid:
    """The grid of ``shape`` points with interior ``[data_min, data_max]`` and ``pad`` margin cells.

    The margin cells are on each side of the interior. Jittable: ``data_min``/``data_max`` may be
    traced.

    Args:
      data_min: ``(d,)`` lower end of the pooled data range.
      data_max: ``(d,)`` upper end of the pooled data range.
      shape: static number of points per axis.
      pad: static number of margin cells on each side, per axis (≥ the kernel half-width).
    """
    data_min = jnp.asarray(data_min)
    data_max = jnp.asarray(data_max)
    span = data_max - data_min
    interior = jnp.asarray([s - 1 - 2 * p for s, p in zip(shape, pad, strict=True)], span.dtype)
    spacing = span / interior
    low = data_min - jnp.asarray(pad, spacing.dtype) * spacing
    return Grid(low=low, spacing=spacing, shape=tuple(int(s) for s in shape))


def grid_layout(
    data_min: np.ndarray,
    data_max: np.ndarray,
    bandwidth: np.ndarray,
    *,
    grid_size: int | None = None,
    cells_per_bandwidth: float | None = None,
    radius: float = KERNEL_RADIUS,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Choose the static layout (points per axis, margin cells) of a grid for given data.

    Host-side (numpy): the result fixes array shapes, so it cannot be traced.

    Args:
      data_min: ``(d,)`` lower end of the pooled data range.
      data_max: ``(d,)`` upper end of the pooled data range (``data_max > data_min``).
      bandwidth: ``(d,)`` kernel bandwidths in data units.
      grid_size: points per axis; ``None`` chooses ``cells_per_bandwidth`` cells per bandwidth,
        capped at :data:`MAX_GRID_SIZE`.
      cells_per_bandwidth: target h/Δ (default: :data:`CELLS_PER_BANDWIDTH_BY_DIM` for d).
      radius: kernel cut-off in bandwidths; the margin holds the whole kernel.

    Returns:
      ``(shape, pad)``: points per axis and margin cells per side.

    Raises:
      ValueError: if ``grid_size`` is too small to hold the kernel margin.
    """
    data_min = np.asarray(data_min, np.float64)
    data_max = np.asarray(data_max, np.float64)
    bandwidth = np.asarray(bandwidth, np.float64)
    d = data_min.shape[0]
    if cells_per_bandwidth is None:
        cells_per_bandwidth = CELLS_PER_BANDWIDTH_BY_DIM.get(d, CELLS_PER_BANDWIDTH)
    shape: list[int] = []
    pad: list[int] = []
    for k in range(d):
        width = float(data_max[k] - data_min[k])
        h = float(bandwidth[k])
        if grid_size is None:
            # interior cells + 2 * radius * h margin, at Δ = h / cells_per_bandwidth.
            cells = math.ceil(width / h * cells_per_bandwidth + 2 * radius * cells_per_bandwidth)
            size = int(min(cells + 1, MAX_GRID_SIZE.get(d, 128)))
        else:
            size = int(grid_size)
        # size − 1 cells hold the data (≥ 1 cell) and a margin of radius·h a side, each cell at
        # most the data range wide: size − 1 ≥ 1 + 2·radius·h/width. (A bandwidth far above the
        # range made the search below run without end, or overflow.)
        least = 1 + 2 * radius * (h / width)
        if not least < (MAX_GRID_POINTS if grid_size is None else size - 1 + 1e-9):
            raise ValueError(
                f"bandwidth {h:.4g} is {h / width:.3g} times the data range {width:.4g} along "
                f"axis {k}: a grid holding the data and the kernel ({radius:g} bandwidths a side) "
                f"needs at least {least:.3g} points"
                + ("" if grid_size is None else f", more than grid_size={size}")
                + "; choose a smaller bandwidth (at this one the KDE is flat over the data)."
            )
        if grid_size is None and size - 1 < least - 2:  # skip sizes that cannot hold it
            size += 2 * math.ceil((least - 2 - (size - 1)) / 2)
        # Solve for the margin: pad cells of width Δ = width / (size - 1 - 2 pad) ≥ radius·h.
        # pad·width ≥ radius·h·(size − 1 − 2 pad) ⇔ pad ≥ radius·h·(size−1) / (width + 2·radius·h)
        p = math.ceil(radius * h * (size - 1) / (width + 2 * radius * h))
        while grid_size is None and size - 1 - 2 * p < 1:  # rounding when h ≫ the data range
            size += 2
            p = math.ceil(radius * h * (size - 1) / (width + 2 * radius * h))
        if size - 1 - 2 * p < 1:
            raise ValueError(
                f"grid_size={size} is too small for bandwidth {h:.4g} on a data range of "
                f"{width:.4g}: the kernel margin needs {p} cells per side."
            )
        shape.append(size)
        pad.append(p)
    if math.prod(shape) > MAX_GRID_POINTS:
        asked = (
            "the bandwidth, far above the data range,"
            if grid_size is None
            else f"grid_size={grid_size}"
        )
        raise ValueError(
            f"{asked} asks for {math.prod(shape):,} grid points over {d} "
            f"{'axis' if d == 1 else 'axes'}; at most {MAX_GRID_POINTS:,} (2^24) are allowed."
        )
    return tuple(shape), tuple(pad)


LAYOUTS = ("exact", "bucketed")
"""Grid layout policies of :func:`plan_layout`."""

_BUCKET_MANTISSAS = (4, 5, 6, 7, 8)  # sizes m · 2^k: four per octave, at most 25% above
PAD_QUANTUM = 16  # bucketed margins (and kernel half-widths) are multiples of 16 cells


def bucket_size(size: int) -> int:
    """The smallest ``m · 2^k ≥ size`` with ``m ∈ {4, 5, 6, 7}``: four sizes per octave.

    At most 25% above ``size`` (and 4 for sizes up to 4). Used for grid sizes and for the padded
    sample sizes of :func:`rdpjax.lower_bound`.
    """
    size = max(int(size), 1)
    e = max(0, (size - 1).bit_length() - 3)
    return min(m << e for m in _BUCKET_MANTISSAS if m << e >= size)


def check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}; got {layout!r}.")


def kernel_half_width(bandwidth: ArrayLike, spacing: ArrayLike, radius: float) -> tuple[int, ...]:
    """Static half-width, in grid cells, of a kernel cut at ``radius`` bandwidths (host-side)."""
    h = np.atleast_1d(np.asarray(bandwidth, np.float64))
    dx = np.atleast_1d(np.asarray(spacing, np.float64))
    pairs: list[tuple[float, float]] = list(zip(h.tolist(), dx.tolist(), strict=True))
    return tuple(int(math.ceil(radius * hk / dk)) for hk, dk in pairs)


def _bucketed_layout(
    lo: np.ndarray, hi: np.ndarray, h: np.ndarray
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A layout from few possible ones: the ``"bucketed"`` policy of :func:`plan_layout`.

    The size is rounded up by :func:`bucket_size`, the margin up to a multiple of 16 cells, and
    the kernel spans the whole margin (≥ 5h, never truncated sooner than the exact layout's).
    """
    exact, _ = grid_layout(lo, hi, h)
    shape: list[int] = []
    pad: list[int] = []
    for k, s0 in enumerate(exact):
        width, hk = float(hi[k] - lo[k]), float(h[k])
        size = bucket_size(s0)
        if size > MAX_GRID_SIZE.get(len(exact), 128):
            size = s0
        while True:  # margin ≥ radius · h, as in grid_layout; grow when h ≫ the range
            need = math.ceil(KERNEL_RADIUS * hk * (size - 1) / (width + 2 * KERNEL_RADIUS * hk))
            p = -(-need // PAD_QUANTUM) * PAD_QUANTUM
            if size - 1 - 2 * p >= 1:
                break
            size *= 2
        shape.append(size)
        pad.append(p)
    if math.prod(shape) > MAX_GRID_POINTS:  # margins rounded up, doubled with h ≫ the range
        return plan_layout(lo, hi, h, layout="exact")  # (3-D at h = 14× the range: 1.6·10¹¹)
    return tuple(shape), tuple(pad), tuple(pad)


def plan_layout(
    lo: ArrayLike,
    hi: ArrayLike,
    h: ArrayLike,
    grid_size: int | None = None,
    layout: str = "bucketed",
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``(shape, pad, half_width)`` of the grid whose interior is ``[lo, hi]`` for bandwidths ``h``.

    Host-side; ``layout`` is ``"exact"`` or ``"bucketed"`` (module docstring); a given
    ``grid_size`` is always honoured exactly.
    """
    lo, hi, h = (np.asarray(a, np.float64) for a in (lo, hi, h))
    if layout == "bucketed" and grid_size is None:
        return _bucketed_layout(lo, hi, h)
    shape, pad = grid_layout(lo, hi, h, grid_size=grid_size)
    spacing = (hi - lo) / (np.asarray(shape) - 1 - 2 * np.asarray(pad))
    half_width = kernel_half_width(h, spacing, KERNEL_RADIUS)
    half_width = tuple(min(m, pd) for m, pd in zip(half_width, pad, strict=True))
    return shape, pad, half_width


def power_of_two_shift(x: Array, limit: int) -> Array:
    """``−e`` where ``|x| = m · 2^e`` (``m`` in [½, 1)) with ``|e| > limit``, else 0 (elementwise).

    Multiplying by ``2^shift`` (``jnp.ldexp``) is exact: it brings such values near 1 and leaves
    the others bit for bit as they are.
    """
    _, e = jnp.frexp(x)
    return jnp.where(jnp.abs(e) > limit, -e, 0)


UNIT_EXPONENT = 64
"""Grids with a cell width beyond ``2^±UNIT_EXPONENT`` along an axis are bounded in other units.

:func:`in_bounded_units` rescales such an axis by a power of two; ordinary grids are untouched."""


def in_bounded_units(grid: Grid) -> tuple[Grid, Array]:
    """``grid`` in units where each cell width is within ``2^±UNIT_EXPONENT``, and the shifts.

    An axis whose cell width is ``m · 2^e`` (``m`` in [½, 1)) with ``|e| > UNIT_EXPONENT`` is
    rescaled by ``2^−e`` (the shift ``−e``); the others by 1 (shift 0). Powers of two scale
    exactly, and the Rényi divergence, its variance and the bound do not depend on the units
    of the outputs, so bounding the rescaled densities (×``2^−Σshift``, with the floor τ and β
    rescaled alike) gives the bound of the outputs themselves: for outputs of magnitude
    ``10^±80`` and beyond, whose densities' powers leave float64, and for nothing else.
    """
    shift = power_of_two_shift(grid.spacing, UNIT_EXPONENT)
    rescaled = Grid(
        low=jnp.ldexp(grid.low, shift), spacing=jnp.ldexp(grid.spacing, shift), shape=grid.shape
    )
    return rescaled, shift
