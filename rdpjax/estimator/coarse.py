"""The second-order terms on a coarser grid than the densities: the same sums, half the points.

The bias (S1) and second-order variance (S2) of :mod:`rdpjax.estimator.second_order` are sums
over the grid of smooth functions of the densities, and smoothings of them. On the 1-D default
grid (16 cells per bandwidth, :data:`rdpjax.estimator.grid.CELLS_PER_BANDWIDTH`) they cost more
than three times the rest of the bound (nine FFT rows per order against the KDE's two), and they
do not need that resolution: a Riemann sum of a function smooth at scale h is accurate to
``O(exp(−2π²(h/Δ)²))`` already at a few cells per bandwidth. So the terms are evaluated on every
``r``-th grid point, with ``r`` the largest integer that leaves at least
:data:`CELLS_PER_BANDWIDTH` cells per bandwidth on each axis (``r = 2`` on the 1-D default grid,
8 cells per bandwidth; 1, no change, on the 2-D and 3-D defaults). The plug-in estimate itself
stays on the full grid.

What is carried to the coarse grid, and how (each is exact or of high order):

* the densities ``p̂, q̂`` and the ``S′π`` of :meth:`Smoothing.densities`: their values at the
  coarse points (``S′π`` rescaled by the cell-volume ratio, being a pmf per cell). These are
  values of the same smooth functions, nothing is re-estimated;
* the binned pmfs ``π`` (not smooth: noise at the scale of a cell), whose role in the sums is
  ``Σ_j π_j f(t_j)`` for smooth ``f`` (sample means, and the smoothings ``S(π ⊙ f)``): pooled
  onto the coarse points with the weights of 4-point Lagrange interpolation, so that
  ``Σ_J π^c_J f(T_J) = Σ_j π_j f̃(t_j)`` with ``f̃`` the cubic interpolant of ``f``, an error
  of ``O((rΔ)⁴ f⁗)`` (hat weights, tried first, are ``O((rΔ)² f″)``, and were measured further
  from the full grid's terms).

Against the full-grid terms the first-order variance and the bias agree to about 1e-7 relative
(``tests/estimator/test_coarse.py``). How far the bounds moved at the default ``r = 2`` and at
``r = 4`` (4 cells per bandwidth), which is why the default keeps more cells: measured,
``docs/calibration.md``, section "Evidence moved out of other docstrings".
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from rdpjax._typing import Array
from rdpjax.estimator.grid import KERNEL_RADIUS, PAD_QUANTUM, Grid

__all__ = ["CELLS_PER_BANDWIDTH", "factors", "coarse_grid", "subsample", "pool"]

CELLS_PER_BANDWIDTH = 6
"""The fewest cells per bandwidth, on each axis, left for the second-order terms.

Guaranteed from the static half-width alone (:func:`factors`), which cannot tell the exact layout
(half-width ``⌈5h/Δ⌉``) from the bucketed one (rounded up to 16 cells): on the 1-D default grid
(16 cells per bandwidth, either layout) it gives ``r = 2``, 8 cells per bandwidth."""


def factors(half_width: tuple[int, ...], cells: float | None = None) -> tuple[int, ...]:
    """The coarsening ``r`` per axis: ``h/(rΔ) ≥ cells``, from the kernel's half-width (static).

    The half-width is ``⌈radius · h/Δ⌉`` cells (:func:`rdpjax.estimator.grid.kernel_half_width`),
    rounded up to a multiple of 16 by the bucketed layout, so ``h/Δ ≥ (half-width − 16)/radius``; an
    axis without smoothing is never coarsened. ``cells`` defaults to :data:`CELLS_PER_BANDWIDTH`,
    read when called (``benchmarks/performance/coarse_terms.py`` sets it).
    """
    cells = CELLS_PER_BANDWIDTH if cells is None else cells
    return tuple(
        max(1, math.floor((m - PAD_QUANTUM) / KERNEL_RADIUS / cells)) if m > 0 else 1
        for m in half_width
    )


def _coarse_size(size: int, r: int) -> int:
    return -(-(size - 1) // r) + 1


def coarse_grid(
    grid: Grid, half_width: tuple[int, ...], r: tuple[int, ...]
) -> tuple[Grid, tuple[int, ...]]:
    """Every ``r``-th point of ``grid`` (from the first) and the kernel's half-width on it.

    The half-width is rounded up, so the kernel is cut no sooner than on the full grid.
    """
    shape = tuple(_coarse_size(s, k) for s, k in zip(grid.shape, r, strict=True))
    spacing = grid.spacing * jnp.asarray(r, grid.spacing.dtype)
    widths = tuple(-(-m // k) for m, k in zip(half_width, r, strict=True))
    return Grid(low=grid.low, spacing=spacing, shape=shape), widths


def subsample(values: Array, r: tuple[int, ...]) -> Array:
    """The values at every ``r``-th point along each axis (zero past the end of the grid)."""
    out = values
    for axis, k in enumerate(r):
        if k == 1:
            continue
        size = out.shape[axis]
        widths = [(0, 0)] * out.ndim
        widths[axis] = (0, k * (_coarse_size(size, k) - 1) + 1 - size)
        index = [slice(None)] * out.ndim
        index[axis] = slice(None, None, k)
        out = jnp.pad(out, widths)[tuple(index)]
    return out


def _cubic_weights(r: int, dtype: jnp.dtype) -> Array:
    """``(4, r)``: the Lagrange weights on nodes J−1 … J+2 of the points ``J + s/r``."""
    u = jnp.arange(r, dtype=dtype) / r
    return jnp.stack(
        [
            -u * (u - 1.0) * (u - 2.0) / 6.0,
            (u + 1.0) * (u - 1.0) * (u - 2.0) / 2.0,
            -(u + 1.0) * u * (u - 2.0) / 2.0,
            (u + 1.0) * u * (u - 1.0) / 6.0,
        ]
    )


def _pool_axis(values: Array, r: int, axis: int) -> Array:
    x = jnp.moveaxis(values, axis, 0)
    size = x.shape[0]
    nc = _coarse_size(size, r)
    x = jnp.pad(x, [(0, r * (nc + 2) - size)] + [(0, 0)] * (x.ndim - 1))
    blocks = x.reshape((nc + 2, r) + x.shape[1:])  # block J: the points J + s/r, 0 ≤ s < r
    # contrib[a, J]: block J's weight on node J − 1 + a.
    contrib = jnp.tensordot(_cubic_weights(r, x.dtype), blocks, axes=([1], [1]))
    rest = [(0, 0)] * (x.ndim - 1)
    # out[i] holds node i − 1; mass on nodes outside the coarse grid lies in the empty margin.
    out = jnp.pad(contrib[0], [(0, 3)] + rest)
    for a in range(1, 4):
        out = out + jnp.pad(contrib[a], [(a, 3 - a)] + rest)
    return jnp.moveaxis(out[1 : 1 + nc], 0, axis)


def pool(pmf: Array, r: tuple[int, ...]) -> Array:
    """A pmf on the grid moved onto every ``r``-th point by cubic-interpolation weights.

    The adjoint of 4-point Lagrange interpolation, axis by axis: ``Σ_J pool(π)_J f(T_J)`` is
    ``Σ_j π_j f̃(t_j)``, ``f̃`` the cubic interpolant of ``f`` (module docstring). The total mass
    is kept (the weights of each point sum to one); single weights may be negative.
    """
    out = pmf
    for axis, k in enumerate(r):
        if k > 1:
            out = _pool_axis(out, k, axis)
    return out
