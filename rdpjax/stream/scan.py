"""The compiled draw-and-bin scan: ``n`` draws per side, chunk by chunk, never in memory at once.

Chunk ``i < n // chunk`` of a side is ``sampler(fold_in(key, i), chunk)``, binned as it is drawn
(:func:`rdpjax.estimator.binning.bin_chunk`, :func:`rdpjax.estimator.binning.count_chunk`) inside
one ``lax.scan``; the chunks are dealt out to the devices of a mesh
(:func:`rdpjax.estimator.sharding.sum_over_devices`), and the last ``n mod chunk`` draws come from
``fold_in(key, n // chunk)``. Memory O(chunk + grid) per device. :func:`_materialize` makes exactly
the same draws in memory.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from rdpjax._internal.fusion import materialized
from rdpjax._internal.progress import report_every, scan_with_reports
from rdpjax._internal.sharding import sum_over_devices
from rdpjax.estimator.binning import bin_accumulator, bin_chunk, bin_counts, count_chunk
from rdpjax.estimator.grid import Grid


@functools.partial(
    jax.jit,
    static_argnames=(
        "sampler", "n", "chunk", "layout", "method", "mesh", "impl", "progress", "cells"
    ),
)  # fmt: skip
def _stream_side(
    key_data, args, low, spacing, tag, edges=None, *, sampler, n, chunk, layout, method, mesh, impl,
    progress, cells=None,
):  # fmt: skip
    """Counts, outside, non-finite and cell numbers of ``n`` draws, chunk by chunk over the devices.

    Full chunk ``i < n // chunk`` comes from ``fold_in(key, i)``, dealt out to the devices, then the
    ``n mod chunk`` rest from ``fold_in(key, n // chunk)``. When the devices do not divide the
    chunks, the padding chunks (at most one per device) are drawn but masked out: a ``lax.cond``
    around the draw would skip them, but it also kept XLA from spreading the draws over the CPU
    cores (about 2 ns more per sample on two CPU devices, measured). Non-finite draws, which carry
    no mass, are counted as ``n − Σ counts`` at the end. With ``progress``, each device reports its
    real chunks done to the host (:func:`rdpjax._internal.progress.scan_with_reports`, ``tag``
    naming the run and side) every :func:`rdpjax._internal.progress.report_every` steps.

    Two statistics can share the draws: ``layout`` (the Rényi bound's grid or support; ``None``
    for none) and ``cells`` (the number of the rejection sets' cells, ``None`` for none; their
    sorted ``edges`` are traced, so new edges reuse the compiled scan): each 1-D draw is counted
    in its cell as :func:`rdpjax.rejection.cells.cell_codes` places it. Both count the same draws
    in the same pass.
    """
    full, rest = divmod(n, chunk)
    shape = (1,) if layout is None else layout.shape

    def add(carry, x, grid, edges, valid=None):
        acc, outside, tally = carry
        if cells is not None:  # e_{i−1} ≤ x < e_i, as the host's cell_codes
            x64 = x.reshape(x.shape[0]).astype(jnp.float64)
            codes = jnp.searchsorted(jnp.asarray(edges, jnp.float64), x64, side="right")
            tally = count_chunk(tally, jnp.zeros(()), codes, valid=valid, method=method)[0]
        if layout is None:
            return acc, outside, tally
        if layout.discrete:  # code c in cell c − low (rdpjax.estimator.planner.plan_draws)
            codes = x.reshape(-1) - jnp.asarray(grid.low)[0].astype(x.dtype)
            acc, outside = count_chunk(acc, outside, codes, valid=valid, clamp=True, method=method)
            return acc, outside, tally
        x = x.reshape(x.shape[0], -1)
        box = layout.interior
        acc, outside = bin_chunk(acc, outside, x, grid, valid=valid, interior=box, method=method)
        return acc, outside, tally

    def task(ids, key_data, args, low, spacing, tag, edges):  # on each device, replicated
        key = jax.random.wrap_key_data(key_data, impl=impl)
        grid = Grid(low=low, spacing=spacing, shape=shape)

        def step(carry, i):
            x = materialized(sampler(jax.random.fold_in(key, i), chunk, args), i)  # i ≥ 0
            if ids.shape[0] * mesh.size == full:  # no padding chunks
                return add(carry, x, grid, edges), None
            return add(carry, x, grid, edges, valid=jnp.broadcast_to(i < full, (chunk,))), None

        init = _empty(layout, grid), jnp.zeros((), jnp.float64), _no_cells(cells)
        if not progress:
            return lax.scan(step, init, ids)[0]
        return scan_with_reports(step, init, ids, tag, full, every=report_every(ids, chunk, mesh))

    grid = Grid(low=low, spacing=spacing, shape=shape)
    edges = jnp.zeros(1) if edges is None else edges
    carry = sum_over_devices(task, full, mesh, key_data, args, low, spacing, tag, edges)
    if rest:
        key = jax.random.wrap_key_data(key_data, impl=impl)
        x = sampler(jax.random.fold_in(key, full), rest, args)
        carry = add(carry, x, grid, edges)
    acc, outside, tally = carry
    if layout is None:
        return acc, outside, jnp.zeros(()), tally
    counts = acc if layout.discrete else bin_counts(acc, grid)
    nonfinite = jnp.round(n - counts.sum()) if not layout.discrete else jnp.zeros(())
    return counts.reshape(layout.shape), outside, nonfinite, tally


def _empty(layout, grid: Grid) -> jax.Array:
    """The Rényi accumulator of ``layout`` (a placeholder of one zero when there is none)."""
    if layout is None:
        return jnp.zeros(1, jnp.float64)
    return jnp.zeros(grid.size, jnp.float64) if layout.discrete else bin_accumulator(grid)


def _no_cells(cells: int | None) -> jax.Array:
    """Zero counts on ``cells`` cells (one placeholder zero without cells)."""
    return jnp.zeros(1 if cells is None else cells, jnp.float64)


@functools.partial(jax.jit, static_argnames=("sampler", "n", "chunk", "impl"))
def _materialize(key_data, args, *, sampler, n, chunk, impl):
    key = jax.random.wrap_key_data(key_data, impl=impl)
    full, rest = divmod(n, chunk)
    chunks = lax.map(
        lambda i: sampler(jax.random.fold_in(key, i), chunk, args),
        jnp.arange(full, dtype=jnp.int32),
    )
    out = chunks.reshape((full * chunk,) + chunks.shape[2:])
    if rest:
        out = jnp.concatenate([out, sampler(jax.random.fold_in(key, full), rest, args)])
    return out
