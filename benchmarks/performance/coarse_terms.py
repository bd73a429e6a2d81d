"""The second-order terms on a coarser grid (rdpjax.estimator.coarse): coverage, change, speed.

    python benchmarks/performance/coarse_terms.py [--reps 200] [--cells 6 4]
        [--out benchmarks/results/performance/coarse_terms.json]

For each cell (law, n per side) the same R replications (one pilot plan, fixed keys) are bounded
three or more ways in one process: with the terms on the full grid (the computation before the
coarse grid, ``coarse.CELLS_PER_BANDWIDTH`` set beyond any grid), and on the coarse grid at each
``--cells``. Printed per cell and way: simultaneous coverage over λ = 2, 5, 7 against the exact
divergence (closed forms), mean lower/exact, then against the full grid: the largest change of a
bound in units of its standard error, and the replications whose verdict (covered or not)
changed. Then the time of the R bounds alone (binned once), best of ``--repeats``, interleaved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax
import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402
from throughput import best_times, block  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax.estimator import coarse  # noqa: E402
from rdpjax.mechanisms._exact import gaussian_renyi, laplace_renyi  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "performance"
ORDERS = (2.0, 5.0, 7.0)
FULL = 1e9  # cells per bandwidth no grid has: the full grid


LAWS = {
    # name: (sampler of P, sampler of Q, exact D_λ(P‖Q) per λ or None)
    "Gaussian, shift 1": (
        lambda k, n: jax.random.normal(k, (n,)),
        lambda k, n: 1.0 + jax.random.normal(k, (n,)),
        [gaussian_renyi(lam, 1.0, 1.0) for lam in ORDERS],
    ),
    "Laplace b = 1, shift 1": (
        lambda k, n: jax.random.laplace(k, (n,)),
        lambda k, n: 1.0 + jax.random.laplace(k, (n,)),
        [laplace_renyi(lam, 1.0, 1.0) for lam in ORDERS],
    ),
    "Gaussian null": (
        lambda k, n: jax.random.normal(k, (n,)),
        lambda k, n: jax.random.normal(k, (n,)),
        [0.0 for _ in ORDERS],
    ),
    "uniform, shift 0.1": (  # D = ∞: no coverage, only the change
        lambda k, n: jax.random.uniform(k, (n,)),
        lambda k, n: 0.1 + jax.random.uniform(k, (n,)),
        None,
    ),
}


def _bounds(plan, binned):
    """Every replication's ``(lower, std_error)``, traced now (the constant is read here)."""
    fn = jax.jit(lambda b: jax.lax.map(lambda x: plan.bound(x), b, batch_size=25))
    out = fn(binned)
    return fn, np.asarray(out.lower), np.asarray(out.std_error)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--cells", type=float, nargs="+", default=[6, 4])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS / "coarse_terms.json"))
    args = parser.parse_args(argv)
    default_cells = coarse.CELLS_PER_BANDWIDTH
    ways = {"full grid": FULL, **{f"{c:g} cells per h": c for c in args.cells}}
    rows, timing = [], {}
    with rdpjax.float64():
        for name, (sample_p, sample_q, exact) in LAWS.items():
            for n in (int(v) for v in args.n):
                k0p, k0q = jax.random.split(jax.random.key(11))
                plan, _, _ = rdpjax.plan_bound(sample_p(k0p, n), sample_q(k0q, n), ORDERS)

                def draw_bin(k, plan=plan, sample_p=sample_p, sample_q=sample_q, n=n):
                    kp, kq = jax.random.split(k)
                    return plan.bin(sample_p(kp, n), sample_q(kq, n))

                keys = jax.random.split(jax.random.key(2), args.reps)
                binned = jax.jit(jax.vmap(draw_bin))(keys)
                results, fns = {}, {}
                for way, cells in ways.items():
                    coarse.CELLS_PER_BANDWIDTH = cells
                    fns[way], lower, se = _bounds(plan, binned)
                    results[way] = (lower, se, coarse.factors(plan.half_width))
                coarse.CELLS_PER_BANDWIDTH = default_cells
                ref_lower, ref_se, _ = results["full grid"]
                for way, (lower, _, r) in results.items():
                    row = {
                        "law": name, "n": n, "way": way, "factor": list(r),
                        "grid": list(plan.shape),
                        "max_change_over_se": float(np.max(np.abs(lower - ref_lower) / ref_se)),
                    }  # fmt: skip
                    if exact is not None:
                        held, ref_held = lower <= np.asarray(exact), ref_lower <= np.asarray(exact)
                        row["simultaneous"] = float(held.all(axis=1).mean())
                        row["verdicts_changed"] = int((held.all(1) != ref_held.all(1)).sum())
                        with np.errstate(divide="ignore", invalid="ignore"):
                            row["tightness"] = (lower.mean(0) / np.asarray(exact)).tolist()
                    rows.append(row)
                    cov = f"{row['simultaneous']:.3f}" if exact is not None else "  —  "
                    flips = row.get("verdicts_changed", "—")
                    print(
                        f"  {name:<24} n={n:<7} {way:<16} r={r} coverage {cov}  "
                        f"max|Δ|/se {row['max_change_over_se']:.1e}  verdicts changed {flips}",
                        flush=True,
                    )
                if n == int(max(args.n)):
                    best = best_times(
                        {w: (lambda fn=fn, b=binned: block(fn(b))) for w, fn in fns.items()},
                        args.repeats,
                    )
                    timing[f"{name}, n={n}"] = best
                    print("   bounds alone: " + ", ".join(
                        f"{w} {s:.3f} s ({best['full grid'] / s:.2f}×)" for w, s in best.items()
                    ), flush=True)  # fmt: skip
    meta = {
        "command": "python benchmarks/performance/coarse_terms.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "reps": args.reps, "orders": ORDERS, "default_cells": default_cells,
    }  # fmt: skip
    write_json(Path(args.out), meta, rows=rows, bounds_alone_seconds=timing)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
