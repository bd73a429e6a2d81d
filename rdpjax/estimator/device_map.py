"""The quantile map applied on the device: the pilot split, the map and what the plan reads.

:mod:`rdpjax.estimator.transform` fits the map ``T`` on the pilot rows (every ``stride``-th row
of each sample, a few thousand at most) on the host. Applying it to the rest is the costly part:
every row, each axis a binary search over the knots and an exponential, then the unmixing. Here
that runs as one compiled program per padded sample size, on the samples already on the device:

* the rest rows (:func:`rdpjax.estimator.transform.pilot_split`'s, in the same order) are
  gathered by an index computed from ``(n, stride)`` inside the program;
* ``T`` of each of them (the same functions as the host path,
  :func:`~rdpjax.estimator.transform.map_axis` and :func:`~rdpjax.estimator.transform.unmixed`);
* their per-axis extremes (the grid's range) and the strided subsample that the settings read
  (:func:`rdpjax.estimator.settings.scale_subsample` of the rest);
* the rows past the rest set to NaN, the padding that :meth:`BoundPlan.bin_padded` does not bin.

The program goes :data:`MAP_CHUNK` rows at a time (each pass stays in the cache) and is one of
:func:`rdpjax.lower_bound`'s programs kept within the program budget. So the mapped rows never
go back to the host, and only the extremes and the settings' subsample do. The values are
those of :func:`rdpjax.estimator.transform.quantile_transform` followed by the host planner's
copy (the same rows in the same order, the same arithmetic):
``tests/estimator/test_device_map.py`` holds them equal bit for bit. The map is fixed by the pilot
before it meets the rows it maps, which is what the bound's validity needs (module docstring of
:mod:`rdpjax.estimator.transform`); where it runs does not touch that.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._internal.buffers import to_jax
from rdpjax._internal.fusion import materialized
from rdpjax._typing import Array, ArrayLike, typed_jit
from rdpjax.estimator.grid import bucket_size
from rdpjax.estimator.settings import scale_stride
from rdpjax.estimator.transform import QuantileMap, map_axis, pilot_stride, unmixed

__all__ = ["MAP_CHUNK", "MappedRest", "map_rest", "mapped_rest_program", "rest_size"]

MAP_CHUNK = 2**15
"""Rows mapped at a time inside the program (a pass over them runs in the cache)."""


class MappedRest(NamedTuple):
    """One sample's rest rows mapped on the device, and what the planner reads of them.

    Attributes:
        rows: ``(padded, d)`` float64 device array: ``T`` of the rest rows, then NaN rows.
        n: the number of rest rows (the bound's sample size).
        extremes: per-axis ``(min, max)`` of the mapped rest rows, host float64 ``(d,)`` arrays.
        subsample: the settings' strided subsample of the mapped rest rows (zero-padded, as
            :func:`rdpjax.estimator.settings.scale_subsample` pads it) and its length.
    """

    rows: Array
    n: int
    extremes: tuple[np.ndarray, np.ndarray]
    subsample: tuple[Array, int]


def rest_size(n: int) -> int:
    """Rows left after the pilot of :func:`~rdpjax.estimator.transform.pilot_split` (``n ≥ 1``)."""
    return n - -(-n // pilot_stride(n))


@typed_jit(static_argnames=("rows", "sub_rows"))
def mapped_rest_program(
    x: Array,
    n: ArrayLike,
    stride: ArrayLike,
    sub_stride: ArrayLike,
    knots: ArrayLike,
    levels: ArrayLike,
    sizes: ArrayLike,
    unmix: ArrayLike | None,
    *,
    rows: int,
    sub_rows: int,
) -> tuple[Array, Array, Array, Array]:
    """``(mapped rest padded to rows, min, max, subsample)`` of the first ``n`` rows of ``x``.

    The rest of :func:`~rdpjax.estimator.transform.pilot_split`: within the ``n // stride``
    whole blocks every row but the block's first, then the rows after the last pilot row. The
    sizes are traced, so one program serves every n padded to the same lengths.
    """
    n, stride, sub_stride = (jnp.asarray(v, jnp.int64) for v in (n, stride, sub_stride))
    per = stride - 1  # rest rows in a whole block
    whole = n // stride * stride
    whole_rest = n // stride * per
    n_rest = n - (n + stride - 1) // stride
    # j // per in float64 (vectorized; integer division is not): exact, since j < 2^53 and
    # j/per is at least 1/(2 per) from the next integer, far above its rounding error.
    per_f = jnp.maximum(per, 1).astype(jnp.float64)
    x2 = jnp.asarray(x)
    knots, levels, sizes = jnp.asarray(knots), jnp.asarray(levels), jnp.asarray(sizes)
    size = min(MAP_CHUNK, rows)
    chunks = -(-rows // size)  # the last one past `rows` when size does not divide it

    def chunk(i: Array) -> tuple[Array, Array, Array]:
        """Rows ``[i·size, (i+1)·size)`` of the mapped rest, and their extremes."""
        j = i * size + jnp.arange(size, dtype=jnp.int64)
        j_f = j.astype(jnp.float64)
        block = jnp.floor((j_f + 0.5) / per_f)
        block_row = (block * stride.astype(jnp.float64) + (j_f - block * per_f) + 1).astype(
            jnp.int64
        )
        source = jnp.where(j < whole_rest, block_row, j - whole_rest + whole + 1)
        real = j < n_rest
        # Axis by axis, each a contiguous row of (d, size): the map of a column of (size, d)
        # read it strided and ran 4 times slower; so do the reductions. Each result is written
        # out once (materialized): fused into its readers, the map ran again in each.
        axes = materialized(x2.T[:, jnp.where(real, source, 0)].astype(jnp.float64), i)
        cols = [
            materialized(
                jnp.where(real, map_axis(axes[a], knots[a], levels[a], sizes[a]), jnp.nan), i
            )
            for a in range(x2.shape[1])
        ]  # NaN past the rest: the padding, off every grid and not binned
        if unmix is None:
            out = jnp.stack(cols, axis=1)
        else:
            out = jnp.where(real[:, None], unmixed(jnp.stack(cols, axis=1), unmix), jnp.nan)
            cols = list(materialized(out.T, i))
        lo = jnp.stack([jnp.min(jnp.where(real, c, jnp.inf)) for c in cols])
        hi = jnp.stack([jnp.max(jnp.where(real, c, -jnp.inf)) for c in cols])
        return out, lo, hi

    # Chunk by chunk, so that each pass of the gather, the map and the extremes runs in the
    # cache: over whole arrays of 10⁷ rows it was slower than the host's chunked map.
    mapped = cast(
        tuple[Array, Array, Array], jax.lax.map(chunk, jnp.arange(chunks, dtype=jnp.int64))
    )
    outs, los, his = mapped
    out = outs.reshape(chunks * size, x2.shape[1])[:rows]
    lo, hi = jnp.min(los, axis=0), jnp.max(his, axis=0)
    s = jnp.arange(sub_rows, dtype=jnp.int64) * sub_stride
    in_sub = s < n_rest
    sub = jnp.where(in_sub[:, None], out[jnp.where(in_sub, s, 0)], 0.0)
    return out, lo, hi, sub


def map_rest(
    x: np.ndarray, qmap: QuantileMap, *, rows: int, points: int, placed: Array | None = None
) -> MappedRest:
    """The rest rows of ``x`` (``(n, d)``, checked finite) mapped by ``qmap`` on the device.

    Args:
        x: the sample on the host (its pilot rows fitted ``qmap``).
        qmap: the map, fitted on the pooled pilots.
        rows: rows the mapped rest (:func:`rest_size` of n) is padded to, with NaN rows.
        points: ``Defaults.scale_points`` (the settings' subsample is at most this long).
        placed: ``x`` already on the device as float64, padded with NaN rows (else copied).
    """
    n = x.shape[0]
    m = rest_size(n)
    sub_stride = scale_stride(m, points)
    sub_len = -(-m // sub_stride)
    if placed is None:
        placed = to_jax(np.asarray(x, np.float64), None)
    knots, levels, sizes = qmap.padded()
    out, lo, hi, sub = mapped_rest_program(
        placed, n, pilot_stride(n), sub_stride, knots, levels, sizes, qmap.unmix,
        rows=rows, sub_rows=max(points, bucket_size(sub_len)),
    )  # fmt: skip
    return MappedRest(out, m, (np.asarray(lo), np.asarray(hi)), (sub, sub_len))
