"""Cells per bandwidth of the grid in d = 2 and 3: coverage, tightness and time of coverage
studies at each candidate, the same keys at every candidate.

The grid has ``(h/Δ)^d`` points per bandwidth cube, so the 1-D default of 16 cells per bandwidth
makes 2-D grids of 10^5–10^6 points (768 × 896 at n = 10^4) and 3-D grids at the 200-point cap,
and the bound's FFTs on them dominate a replication. Coarser cells add a binning bias of
order (Δ/h)² to the density estimate; this study measures what that does to the bound:
for each candidate ``c`` it sets ``rdpjax.estimator.grid.CELLS_PER_BANDWIDTH_BY_DIM[d] = c`` and
runs ``rdpjax.studies.coverage`` (vmapped replications, as ``rdpjax coverage`` does) on zoo
mechanisms with exact divergences on the pair (21) with d-dimensional rows: the Gaussian vector
sum and the Laplace vector sum (a product law). Coverage is simultaneous over λ = 2, 5, 7
(α = 0.05) with a Wilson 95% interval; ``seconds`` is the study's wall time including its
compilation.

    python benchmarks/calibration/calibrate_multid.py [--reps 200] [--n 1e4] [--out FILE]
        # results/calibration/calibrate_multid.{json,md}
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json, write_table  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax.estimator import grid as grid_module  # noqa: E402
from rdpjax.studies import coverage, wilson_interval  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
ORDERS = (2.0, 5.0, 7.0)
# (name, dimension, factory): exact divergences on paper_pair(dim=d) come from the zoo.
CELLS = (
    ("gaussian σ=5", 2, lambda: rdpjax.mechanisms.Gaussian(5.0)),
    ("gaussian σ=2", 2, lambda: rdpjax.mechanisms.Gaussian(2.0)),
    ("laplace b=5", 2, lambda: rdpjax.mechanisms.Laplace(5.0)),
    ("gaussian σ=5", 3, lambda: rdpjax.mechanisms.Gaussian(5.0)),
    ("laplace b=5", 3, lambda: rdpjax.mechanisms.Laplace(5.0)),
)
CANDIDATES = {2: (4, 6, 8, 16), 3: (3, 4, 6, 8)}


def run_cell(name: str, d: int, make, cells: int, n: int, reps: int, seed: int) -> dict:
    grid_module.CELLS_PER_BANDWIDTH_BY_DIM[d] = cells
    x, xp = rdpjax.mechanisms.databases.paper_pair(dim=d)
    start = time.perf_counter()
    r = coverage(jax.random.key(seed), make(), x, xp, ORDERS, n=n, reps=reps)
    seconds = time.perf_counter() - start
    k = int(np.all(r.lower <= r.exact, axis=1).sum())
    plan_shape = _grid_shape(make(), x, xp, n, seed)
    return {
        "law": name,
        "d": d,
        "cells_per_bandwidth": cells,
        "n": n,
        "reps": reps,
        "grid": list(plan_shape),
        "exact": r.exact.tolist(),
        "simultaneous": k / reps,
        "wilson": list(wilson_interval(k, reps)),
        "tightness": np.asarray(r.tightness).tolist(),
        "seconds": seconds,
    }


def _grid_shape(mechanism, x, xp, n: int, seed: int) -> tuple[int, ...]:
    """The grid of one bound at these settings (drawn apart from the study)."""
    k1, k2 = jax.random.split(jax.random.key(seed + 1))
    with rdpjax.float64():
        p = mechanism.sample(k1, np.asarray(x, float), n)
        q = mechanism.sample(k2, np.asarray(xp, float), n)
        return rdpjax.plan_bound(p, q, list(ORDERS))[0].shape


def format_table(cells: list[dict]) -> str:
    lines = [
        "| law | d | cells / h | n | grid | simultaneous (95% CI) | tightness λ = 2, 5, 7 "
        "| seconds (R studies) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        lo, hi = c["wilson"]
        tight = " / ".join(f"{t:.2f}" for t in c["tightness"])
        lines.append(
            f"| {c['law']} | {c['d']} | {c['cells_per_bandwidth']} | {c['n']:,} | "
            f"{' × '.join(map(str, c['grid']))} | {c['simultaneous']:.3f} [{lo:.3f}, {hi:.3f}] | "
            f"{tight} | {c['seconds']:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, default=1e4)
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--cells", type=int, nargs="+", default=None, help="candidates (all d)")
    parser.add_argument("--out", type=Path, default=RESULTS / "calibrate_multid.json")
    args = parser.parse_args(argv)
    default = dict(grid_module.CELLS_PER_BANDWIDTH_BY_DIM)
    rows = []
    try:
        for name, d, make in CELLS:
            if d not in args.dims:
                continue
            for c in args.cells or CANDIDATES[d]:
                rows.append(run_cell(name, d, make, c, int(args.n), args.reps, seed=d))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        grid_module.CELLS_PER_BANDWIDTH_BY_DIM.update(default)
    given = " ".join(argv or sys.argv[1:])
    meta = {
        "command": f"python benchmarks/calibration/calibrate_multid.py {given}",
        "reps": args.reps,
        "alpha": 0.05,
        "orders": list(ORDERS),
        "date": time.strftime("%Y-%m-%d"),
    }
    write_json(args.out, meta, cells=rows)
    heading = (
        f"`{meta['command'].strip()}` (R = {args.reps} a cell, jax {jax.__version__}, "
        f"{meta['date']}; simultaneous over λ = 2, 5, 7 at α = 0.05)"
    )
    write_table(args.out.with_suffix(".md"), heading, format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
