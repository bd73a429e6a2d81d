"""Linear binning inside the streamed scan: rdpjax's pair-row accumulator (in 1-D, one packed
int64 scatter-add a sample) against the flat-grid ``(2,)*d`` window scatter it replaced, at
d = 1, 2, 3; in 1-D also against the packed scatter as it was up to d6523db (cell and fraction
rounded apart: a floor, a subtraction and two conversions a sample, where rdpjax now rounds once).
Every variant bins each chunk as the stream does, written to memory first
(:func:`rdpjax._internal.fusion.materialized`), but one: the pair rows binning the draws as XLA
fuses them, which recomputes the draws' tail in both scatter operands. "Draw only" sums the draws
as XLA fuses them (nothing written out).

Each variant draws chunks of ``N(0, 25)`` samples (float32, as the stream's samplers do) and
bins them in one ``lax.scan``, so the cost beyond the draws is what the stream pays per sample;
"draw only" sums the same draws instead. Timings are the best of interleaved runs in one
process; both layouts must give the same counts (checked; in 1-D up to the rounding of each
cell fraction to ``fraction_bits(chunk)`` bits, see :mod:`rdpjax.estimator.binning`).

    python benchmarks/performance/binning_layouts.py   # results/performance/binning_layouts.json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax

import rdpjax
from rdpjax._internal.fusion import materialized
from rdpjax._internal.packed import FIRST, SPLIT, packing
from rdpjax.estimator.binning import bin_accumulator, bin_chunk, bin_counts, fraction_bits
from rdpjax.estimator.grid import Grid

RESULTS = Path(__file__).resolve().parents[1] / "results" / "performance"
SHAPES = {1: (4096,), 2: (256, 256), 3: (64, 64, 64)}


def window_bin_chunk(counts, outside, x, grid, interior):
    """The previous formulation (rdpjax ≤ 92f41ed): one scatter-add of a ``(2,)*d`` window per
    sample onto the flat grid, unbinned samples given mass 0."""
    d = grid.dim
    shape = jnp.asarray(grid.shape)
    u = (x.astype(jnp.float64) - grid.low) / grid.spacing
    lo = jnp.asarray([a for a, _ in interior], jnp.float64)
    hi = jnp.asarray([b for _, b in interior], jnp.float64)
    binned = jnp.all(jnp.isfinite(u), axis=-1)
    off = ~jnp.all((u >= lo - 1e-6) & (u <= hi + 1e-6), axis=-1) & binned
    outside = outside + jnp.sum(off, dtype=jnp.int32)
    u = jnp.where(binned[:, None], jnp.clip(u, lo, hi), lo)
    i0 = jnp.clip(jnp.floor(u), 0, shape - 2).astype(jnp.int32)
    frac = jnp.clip(u - i0, 0.0, 1.0)
    window = binned.astype(jnp.float64).reshape((-1,) + (1,) * d)
    for k in range(d):
        pair = jnp.stack([1.0 - frac[:, k], frac[:, k]], axis=-1)
        window = window * pair.reshape((-1,) + (1,) * k + (2,) + (1,) * (d - k - 1))
    dims = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, d + 1)),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(range(d)),
    )
    mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    grid_counts = lax.scatter_add(counts.reshape(grid.shape), i0, window, dims, mode=mode)
    return grid_counts.reshape(-1), outside


def two_roundings_bin_chunk(acc, outside, x, grid, interior):
    """The packed 1-D binning up to d6523db: the cell by a floor, the fraction rounded apart."""
    size = acc.shape[0] - 1
    (lo, hi), (below, above) = interior[0], (size + 1, size + 2)
    u = (x[:, 0].astype(jnp.float64) - grid.low[0]) / grid.spacing[0]
    inside = jnp.clip(u, lo, hi)
    cell = jnp.minimum(inside.astype(jnp.int32), size - 2)
    frac = inside - cell.astype(inside.dtype)
    row = jnp.where(u < lo - 1e-6, below, jnp.where(u > hi + 1e-6, above, cell))
    row = jnp.where(jnp.isfinite(u), row, size)
    bits, copies = packing(u.shape[0])
    assert copies == 1, "chunks below 2^21 only"
    shift = bits + row.shape[0].bit_length()
    q = (frac * 2.0**bits + 0.5).astype(jnp.int32)
    packed = (
        jnp.zeros(size + 3, jnp.int64)
        .at[row]
        .add((jnp.int64(1) << shift) + q.astype(jnp.int64), mode="promise_in_bounds")
    )
    parts = jnp.stack([packed >> shift, packed & ((1 << shift) - 1)], axis=-1).astype(jnp.float64)
    pairs = parts * FIRST + parts[:, 1:] * 2.0**-bits * SPLIT
    off = pairs[below:].sum(axis=-1)
    acc = (acc + pairs[:below]).at[lo, 0].add(off[0])
    acc = acc.at[hi, 0].add(off[1]) if hi < size - 1 else acc.at[hi - 1, 1].add(off[1])
    return acc, outside + off.sum()


def variants(d: int, n: int, chunk: int):
    shape = SHAPES[d]
    grid = Grid(
        low=jnp.full(d, -25.0), spacing=jnp.asarray([50.0 / (s - 1) for s in shape]), shape=shape
    )
    interior = tuple((s // 16, s - 1 - s // 16) for s in shape)

    def draw(key, i):
        return 5.0 * jax.random.normal(jax.random.fold_in(key, i), (chunk, d), jnp.float32)

    def scan(step, init, key, materialize=True):
        def body(c, i):
            x = draw(key, i)
            return step(c, materialized(x, i) if materialize else x), None  # the stream's way

        return lax.scan(body, init, jnp.arange(n // chunk))[0]

    @jax.jit
    def draw_only(key):
        return scan(lambda c, x: c + jnp.sum(x), jnp.float32(0), key, False)

    @jax.jit
    def pair_rows(key):
        init = (bin_accumulator(grid), jnp.zeros(()))
        acc, out = scan(lambda c, x: bin_chunk(*c, x, grid, interior=interior), init, key)
        return bin_counts(acc, grid), out

    @jax.jit
    def pair_rows_fused(key):  # the chunk not written out: XLA recomputes the draws' tail
        init = (bin_accumulator(grid), jnp.zeros(()))
        acc, out = scan(lambda c, x: bin_chunk(*c, x, grid, interior=interior), init, key, False)
        return bin_counts(acc, grid), out

    @jax.jit
    def flat_window(key):
        init = (jnp.zeros(grid.size), jnp.zeros(()))
        return scan(lambda c, x: window_bin_chunk(*c, x, grid, interior), init, key)

    out = {
        "draw only": draw_only,
        "pair rows": pair_rows,
        "pair rows, draws not materialized": pair_rows_fused,
        "flat window": flat_window,
    }
    if d == 1:

        @jax.jit
        def two_roundings(key):
            init = (bin_accumulator(grid), jnp.zeros(()))
            acc, out = scan(lambda c, x: two_roundings_bin_chunk(*c, x, grid, interior), init, key)
            return bin_counts(acc, grid), out

        out["pair rows, two roundings"] = two_roundings
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2**24, help="samples per variant (default 2^24)")
    parser.add_argument("--chunk", type=int, default=2**16, help="samples per scan step")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "binning_layouts.json")
    args = parser.parse_args(argv)
    from throughput import best_times  # same directory

    res = {
        "command": "python benchmarks/performance/binning_layouts.py",
        "n": args.n,
        "chunk": args.chunk,
        "jax": jax.__version__,
        "cpu_count": os.cpu_count(),
        "rows": [],
    }
    key = jax.random.key(0)
    with rdpjax.float64():
        for d in (1, 2, 3):
            fns = variants(d, args.n, args.chunk)
            outs = {name: jax.block_until_ready(fn(key)) for name, fn in fns.items()}
            diff = float(jnp.max(jnp.abs(outs["pair rows"][0] - outs["flat window"][0])))
            same_outside = float(outs["pair rows"][1]) == float(outs["flat window"][1])
            fused = outs["pair rows, draws not materialized"]
            assert bool(jnp.all(fused[0] == outs["pair rows"][0])) and float(fused[1]) == float(
                outs["pair rows"][1]
            )
            if d == 1:  # one rounding or two: the same split of every sample
                old = outs["pair rows, two roundings"]
                assert bool(jnp.all(old[0] == outs["pair rows"][0])) and float(old[1]) == float(
                    outs["pair rows"][1]
                )
            t = best_times(
                {name: lambda fn=fn: jax.block_until_ready(fn(key)) for name, fn in fns.items()},
                args.repeats,
            )
            ns = {name: s / args.n * 1e9 for name, s in t.items()}
            row = {
                "d": d,
                "shape": SHAPES[d],
                "ns_per_sample": ns,
                "beyond_draws_ns": {
                    k: v - ns["draw only"] for k, v in ns.items() if k != "draw only"
                },
                "max_abs_count_difference": diff,
                "same_outside": same_outside,
            }
            res["rows"].append(row)
            b = row["beyond_draws_ns"]
            print(
                f"d={d} grid {SHAPES[d]}: draws {ns['draw only']:.1f} ns/sample; binning beyond "
                f"the draws: pair rows {b['pair rows']:.2f} ns, flat window {b['flat window']:.1f}"
                f" ns ({b['flat window'] / b['pair rows']:.1f}×), pair rows with the draws not "
                f"materialized {b['pair rows, draws not materialized']:.2f} ns"
                + (
                    ", pair rows with two roundings (≤ d6523db) "
                    f"{b['pair rows, two roundings']:.2f} ns (the same counts)"
                    if d == 1
                    else ""
                )
                + f"; counts differ by ≤ {diff:.1e}",
                flush=True,
            )
            # In 1-D the pair rows round each cell fraction to b bits: a sample's split moves by
            # at most 2^-(b+1), so no count can move by more than n · 2^-(b+1).
            bits = fraction_bits(args.chunk) if d == 1 else None
            assert diff < (1e-6 if bits is None else args.n * 2.0 ** -(bits + 1)) and same_outside
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
