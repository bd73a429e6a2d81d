"""Linear binning of samples onto a grid, and counting of discrete codes.

Both are chunked with ``lax.scan`` (temporaries O(chunk · 2^d), the accumulator O(grid) whatever
n is). Counts accumulate in float64 (integers exact up to 2^53; fractional weights within n · 2^-53
≈ 2.4e-7 relative at n = 2^31), which needs the scoped 64-bit mode of :mod:`rdpjax._precision`.

Linear binning (Wand 1994) splits each sample's unit mass among the 2^d corners of its cell in
proportion to the opposite sub-volumes. It is a fixed Markov kernel applied to every sample, so
by the data-processing inequality the Rényi divergence of the binned laws never exceeds that of
the original laws: binning can only make a lower bound more conservative. Clamping samples into
a fixed box before binning (``interior=``) is another fixed map, so it keeps that property;
dropping them would not (conditioning on a region can *raise* a divergence), which is why
samples off the grid are always counted and, in the streamed pipeline, clamped by default.

The accumulator (:func:`bin_accumulator`) is not the grid itself but ``(grid.size + 1, 2)`` "pair
rows": row ``r`` holds the weights given to flat grid point ``r`` (column 0) and to its successor
along the last axis (column 1) by samples whose cell starts at ``r``; row ``grid.size`` is a discard
row that takes the samples that are not binned (off the grid, non-finite, masked out), so no
per-sample mask multiplies the weights. :func:`bin_counts` folds the pairs into counts once, at the
end (the accumulator takes twice the grid's memory). A sample thus costs ``2^(d-1)`` row updates of
two weights each, with one index per row.

The 1-D case (one real output per draw, the common one) scatters one int64 per sample, its count
and its rounded cell fraction packed together (:mod:`rdpjax._internal.packed`).

Two formulations of the accumulation, selectable by ``method``:

* ``"scatter"`` (default): scatter-adds of the pair rows (O(n · 2^d)).
* ``"sort"``: sort the (row, column) keys, then differences of a cumulative sum at their
  boundaries (O(n log n), no atomics). A workaround for GPUs whose scatter-add falls back to a
  compare-and-swap retry loop under index contention (jaxlib 0.10.2–0.11, openxla/xla#46225);
  on CPU it is far slower than ``"scatter"``. Both give the same counts up to round-off and,
  in 1-D, the rounding of the fraction described above.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh

from rdpjax._internal.packed import EDGE_SLACK, FIRST, SPLIT, bin_1d, fraction_bits, packing
from rdpjax._internal.sharding import sum_over_blocks  # pyright: ignore[reportUnknownVariableType]  # sharding is outside the strict scope
from rdpjax._precision import require_float64
from rdpjax._typing import Array, typed_jit
from rdpjax.estimator.grid import Grid

__all__ = [
    "DEFAULT_CHUNK",
    "BINNING_METHODS",
    "linear_binning",
    "count_codes",
    "bin_accumulator",
    "bin_chunk",
    "bin_counts",
    "count_chunk",
    "fraction_bits",
    "packing",
]

DEFAULT_CHUNK = 2**16
BINNING_METHODS = ("scatter", "sort")
_IN_BOUNDS = lax.GatherScatterMode.PROMISE_IN_BOUNDS


def _check_method(method: str) -> None:
    if method not in BINNING_METHODS:
        raise ValueError(f"method must be one of {BINNING_METHODS}; got {method!r}.")


def _sorted_segment_sum(idx: Array, weights: Array, size: int) -> Array:
    """``Σ_{i: idx_i = b} weights_i`` for ``b < size`` by sorting (no scatter).

    Indices outside ``[0, size)`` are ignored.
    """
    idx, weights = lax.sort((idx, weights), num_keys=1)
    csum = jnp.concatenate([jnp.zeros(1, weights.dtype), jnp.cumsum(weights)])
    edges = jnp.searchsorted(idx, jnp.arange(size + 1, dtype=idx.dtype), method="sort")
    return jnp.diff(csum[edges])


def bin_accumulator(grid: Grid) -> Array:
    """An empty linear-binning accumulator for ``grid``: ``(grid.size + 1, 2)`` float64 pair rows.

    See the module docstring. Fold it into counts with :func:`bin_counts`.
    """
    return jnp.zeros((grid.size + 1, 2), jnp.float64)


def bin_counts(acc: Array, grid: Grid) -> Array:
    """Flat ``(grid.size,)`` counts (C order over ``grid.shape``) of an accumulator.

    Each point's count is its own weight (column 0 of its row) plus the weight its predecessor along
    the last axis passed on (column 1 of that row). The discard row is dropped.
    """
    pairs = acc[:-1].reshape(grid.shape + (2,))
    passed_on = jnp.pad(pairs[..., :-1, 1], [(0, 0)] * (grid.dim - 1) + [(1, 0)])
    return (pairs[..., 0] + passed_on).reshape(-1)


def bin_chunk(
    acc: Array,
    outside: Array,
    x: Array,
    grid: Grid,
    *,
    valid: Array | None = None,
    interior: tuple[tuple[int, int], ...] | None = None,
    method: str = "scatter",
) -> tuple[Array, Array]:
    """Add one chunk of samples to a linear-binning accumulator.

    Args:
      acc: ``(grid.size + 1, 2)`` float64 accumulator (:func:`bin_accumulator`).
      outside: float64 scalar, the number of samples seen outside the grid (or the interior)
        so far.
      x: ``(c, d)`` samples.
      grid: the grid.
      valid: optional ``(c,)`` booleans; samples with ``False`` are ignored entirely (neither
        binned nor counted), e.g. the padding of a last, partial chunk.
      interior: static ``((lo, hi), ...)`` grid-index bounds per axis. When given, samples
        outside the box ``[lo, hi]`` (in cells, up to 1e-6 cell of round-off) are counted in
        ``outside`` *and clamped into it* (a fixed map, so bounds stay valid); non-finite
        samples are neither binned nor counted (each finite sample adds a mass of exactly one,
        so their number is ``c − Σ counts``). When ``None``, samples outside the grid
        (non-finite ones included) are counted in ``outside`` and not binned.
      method: ``"scatter"`` or ``"sort"`` (module docstring). In 1-D, ``"scatter"`` rounds
        each cell fraction to the bits of :func:`packing` (one int64 scatter-add per sample;
        module docstring).

    Returns:
      Updated ``(acc, outside)``.
    """
    _check_method(method)
    d = grid.dim
    shape = jnp.asarray(grid.shape)
    low, spacing = jnp.asarray(grid.low)[None], jnp.asarray(grid.spacing)[None]  # (1, d)
    u = (x.astype(jnp.float64) - low) / spacing  # position in cell units
    if method == "scatter" and d == 1:
        return bin_1d(acc, outside, u[:, 0], valid=valid, interior=interior)

    def every(
        a: Array,
    ) -> Array:  # over axes; d = 1 needs no reduction (keeps the chunk loop fused)
        return a[:, 0] if d == 1 else jnp.all(a, axis=-1)

    if interior is None:
        lo, hi = jnp.zeros((1, d)), (shape - 1)[None].astype(jnp.float64)
        binned = every((u >= lo) & (u <= hi))
        off = ~binned
    else:
        lo = jnp.asarray([[a for a, _ in interior]], jnp.float64)  # (1, d)
        hi = jnp.asarray([[b for _, b in interior]], jnp.float64)
        binned = every(jnp.isfinite(u))
        # Off the box up to round-off (a sample on its edge computes to within 1e-6 cell of
        # it); NaN compares False and is not counted here (it is not binned either).
        off = ~every((u >= lo - EDGE_SLACK) & (u <= hi + EDGE_SLACK)) & binned
    if valid is not None:
        binned = binned & valid
        off = off & valid
    outside = outside + jnp.sum(off, dtype=jnp.int32).astype(outside.dtype)
    u = jnp.clip(u, lo, hi)
    # the lower corner; u − cell ∈ [0, 1]
    cell = jnp.clip(jnp.floor(u), 0, (shape - 2)[None].astype(u.dtype))
    frac = u - cell
    cell = cell.astype(jnp.int32)
    strides = [1] * d
    for k in range(d - 2, -1, -1):
        strides[k] = strides[k + 1] * grid.shape[k + 1]
    # Linear binning (Wand 1994): corner c of the cell gets Π_k (c_k ? frac_k : 1 − frac_k).
    # The pair (c_last = 0, 1) shares one row; the other axes' corners are separate rows.
    pair = jnp.asarray(FIRST + frac[:, -1:] * SPLIT)  # (1 − frac, frac), without a stack
    rows: list[Array] = []
    weights: list[Array] = []
    for corner in itertools.product((0, 1), repeat=d - 1):
        row = sum((cell[:, k] + c) * strides[k] for k, c in enumerate(corner + (0,)))
        w = pair
        for k, c in enumerate(corner):
            w = w * (frac[:, k] if c else 1.0 - frac[:, k])[:, None]
        rows.append(jnp.where(binned, row, grid.size))  # the discard row
        weights.append(w)
    if method == "scatter":
        dims = lax.ScatterDimensionNumbers(
            update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
        )
        for row, w in zip(rows, weights, strict=True):
            # rows ∈ [0, grid.size] by the clips and the where
            acc = lax.scatter_add(acc, row[:, None], w, dims, mode=_IN_BOUNDS)
        return acc, outside
    keys = [2 * row + c for row in rows for c in (0, 1)]  # flat (row, column) of acc
    wts = [jnp.where(binned, w[:, c], 0.0) for w in weights for c in (0, 1)]  # no NaN in sums
    add = _sorted_segment_sum(jnp.concatenate(keys), jnp.concatenate(wts), acc.size)
    return acc + add.reshape(acc.shape), outside


def count_chunk(
    counts: Array,
    outside: Array,
    codes: Array,
    *,
    valid: Array | None = None,
    clamp: bool = False,
    method: str = "scatter",
) -> tuple[Array, Array]:
    """Add one chunk of integer codes to ``(size,)`` float64 counts.

    Codes outside ``[0, size)`` are counted in ``outside``; with ``clamp`` they are also
    clamped to the nearest end of the support (a fixed map), otherwise not counted in
    ``counts``. ``valid`` masks samples out entirely, as in :func:`bin_chunk`.
    """
    _check_method(method)
    size = counts.shape[0]
    inside = (codes >= 0) & (codes < size)
    keep = jnp.ones_like(inside) if clamp else inside
    if valid is not None:
        keep = keep & valid
        outside = outside + jnp.sum(~inside & valid).astype(outside.dtype)
    else:
        outside = outside + jnp.sum(~inside).astype(outside.dtype)
    idx = jnp.clip(codes, 0, size - 1).astype(jnp.int32)
    mass = keep.astype(jnp.float64)
    if method == "scatter":
        return counts.at[idx].add(mass, mode="promise_in_bounds"), outside
    return counts + _sorted_segment_sum(idx, mass, size), outside


def scan_chunks(step: Callable[[Any, Array], Any], carry: Any, data: Array, chunk_size: int) -> Any:
    """Fold ``step(carry, chunk)`` over ``data`` in chunks: a scan over full chunks, then the tail.

    The sizes are static, and no padded copy of the data is made.
    """
    n = data.shape[0]
    full = n // chunk_size

    def body(c: Any, i: Array) -> tuple[Any, None]:
        return step(c, lax.dynamic_slice_in_dim(data, i * chunk_size, chunk_size)), None

    if full:
        carry, _ = lax.scan(body, carry, jnp.arange(full))
    if n - full * chunk_size:
        carry = step(carry, data[full * chunk_size :])
    return carry


@typed_jit(static_argnames=("chunk_size", "method", "mesh"))
def linear_binning(
    samples: Array,
    grid: Grid,
    *,
    chunk_size: int = DEFAULT_CHUNK,
    method: str = "scatter",
    mesh: Mesh | None = None,
) -> tuple[Array, Array]:
    """Linearly bin ``samples`` onto ``grid``. Cost O(n · 2^d + grid), memory O(chunk + grid).

    Must run inside ``rdpjax.float64()`` (public rdpjax functions enter it).

    Args:
      samples: ``(n,)`` or ``(n, d)`` samples, d = ``grid.dim``.
      grid: the grid.
      chunk_size: samples per scan step (static).
      method: ``"scatter"`` or ``"sort"`` (module docstring).
      mesh: optional one-axis mesh (:func:`rdpjax.estimator.sharding.draw_mesh`). Each of its D
        devices bins one contiguous block of ``⌊n / D⌋`` samples and one ``psum`` adds the
        accumulators (the last ``n mod D`` samples are binned after it): the same counts up to the
        order of floating-point additions. Meant for several accelerators, or a multi-core CPU with
        one jax device per core, where each core then runs a scatter (timed:
        ``docs/performance.md``, section "linear_binning over a mesh"). The samples should already
        lie split that way,
        ``jax.device_put(x, NamedSharding(mesh, PartitionSpec(sharding.AXIS)))`` (D must divide n),
        or jit moves them first; a numpy array 64-byte aligned is then taken without a copy on CPU
        (so it must not be modified while jax holds it).

    Returns:
      ``(counts, outside)``: float64 counts of shape ``grid.shape`` (summing to n − outside) and
      the number of samples that fell outside the grid (not binned).
    """
    require_float64("linear_binning")
    x = samples.reshape(samples.shape[0], -1)
    init = (bin_accumulator(grid), jnp.zeros((), jnp.float64))

    def bin_all(carry: tuple[Array, Array], data: Array) -> tuple[Array, Array]:
        return scan_chunks(
            lambda c, xc: bin_chunk(c[0], c[1], xc, grid, method=method), carry, data, chunk_size
        )

    if mesh is None or mesh.size == 1 or x.shape[0] < mesh.size:
        acc, outside = bin_all(init, x)
    else:
        split = x.shape[0] - x.shape[0] % mesh.size
        acc, outside = sum_over_blocks(lambda block: bin_all(init, block), mesh, x[:split])
        if split < x.shape[0]:
            acc, outside = bin_chunk(acc, outside, x[split:], grid, method=method)
    return bin_counts(acc, grid).reshape(grid.shape), outside


@typed_jit(static_argnames=("size", "chunk_size", "method"))
def count_codes(
    codes: Array, size: int, *, chunk_size: int = DEFAULT_CHUNK, method: str = "scatter"
) -> Array:
    """Counts of integer codes in ``[0, size)``, exact (float64) for any n < 2^53.

    Codes outside ``[0, size)`` are not counted. Must run inside ``rdpjax.float64()``.
    """
    require_float64("count_codes")

    def step(counts: Array, c: Array) -> Array:
        return count_chunk(counts, jnp.zeros(()), c, method=method)[0]

    return scan_chunks(step, jnp.zeros(size, jnp.float64), codes, chunk_size)
