"""How many outputs per database a bound needs: the smallest n at which the default bound
reaches a given fraction of the true ε(λ), for leaks of several sizes.

For each zoo mechanism and noise scale on the pair (21) (so that D_2 runs from small to large
leaks), ``rdpjax.studies.coverage`` runs R replications at each n of a grid (the default
estimator, λ = 2, 5, 7 simultaneous at α = 0.05) and records the mean bound over the exact
value and the simultaneous coverage. The table gives, per mechanism and λ, the first n of the
grid whose mean bound reaches half and nine tenths of ε(λ) (">" when none does). A user with
a mechanism of about that size of leak reads off the draws an audit needs; a law of another
shape (heavy tails, many discrete values) needs more (docs/calibration.md).

    python benchmarks/calibration/required_n.py [--reps 200] [--out FILE]
        # writes results/calibration/required_n.{json,md}
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
from rdpjax.studies import coverage  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
ORDERS = (2.0, 5.0, 7.0)
NS = (500, 1_000, 2_000, 5_000, 10_000, 30_000, 100_000, 300_000)
FRACTIONS = (0.5, 0.9)
MECHANISMS = (
    ("gaussian σ=0.5", lambda: rdpjax.mechanisms.Gaussian(0.5)),
    ("gaussian σ=1", lambda: rdpjax.mechanisms.Gaussian(1.0)),
    ("gaussian σ=2", lambda: rdpjax.mechanisms.Gaussian(2.0)),
    ("gaussian σ=5", lambda: rdpjax.mechanisms.Gaussian(5.0)),
    ("laplace b=1", lambda: rdpjax.mechanisms.Laplace(1.0)),
    ("laplace b=5", lambda: rdpjax.mechanisms.Laplace(5.0)),
    ("randomized response ε0=1.5", lambda: rdpjax.mechanisms.RandomizedResponse(1.5)),
)


def first_n(rows: list[dict], j: int, fraction: float) -> int | None:
    """The first n whose mean bound at order j reaches ``fraction`` of the exact value."""
    for row in rows:
        if row["tightness"][j] >= fraction:
            return row["n"]
    return None


def format_table(cells: list[dict]) -> str:
    head = " | ".join(f"λ = {lam:g}: ½ / 0.9" for lam in ORDERS)
    lines = [
        f"| mechanism | ε(2) / ε(5) / ε(7) | {head} | worst simultaneous coverage |",
        "|---|---|" + "---|" * len(ORDERS) + "---|",
    ]
    for c in cells:
        parts = []
        for j in range(len(ORDERS)):
            found = [first_n(c["rows"], j, f) for f in FRACTIONS]
            parts.append(" / ".join(f"{v:,}" if v else f"> {NS[-1]:,}" for v in found))
        exact = " / ".join(f"{v:.3g}" for v in c["exact"])
        worst = min(r["simultaneous"] for r in c["rows"])
        lines.append(f"| {c['mechanism']} | {exact} | {' | '.join(parts)} | {worst:.3f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "required_n.json")
    args = parser.parse_args(argv)
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    cells = []
    for i, (name, make) in enumerate(MECHANISMS):
        rows, start = [], time.perf_counter()
        for n in NS:
            key = jax.random.fold_in(jax.random.key(31), 1000 * i + NS.index(n))
            r = coverage(key, make(), x, xp, ORDERS, n=n, reps=args.reps)
            rows.append(
                {
                    "n": n,
                    "simultaneous": float(r.simultaneous),
                    "tightness": np.asarray(r.tightness).tolist(),
                    "mean_lower": np.asarray(r.lower).mean(axis=0).tolist(),
                }
            )
        cells.append(
            {
                "mechanism": name,
                "exact": np.asarray(r.exact).tolist(),
                "rows": rows,
                "seconds": time.perf_counter() - start,
            }
        )
        print(json.dumps(cells[-1]), flush=True)
    meta = {
        "command": "python benchmarks/calibration/required_n.py " + " ".join(argv or sys.argv[1:]),
        "reps": args.reps,
        "alpha": 0.05,
        "orders": list(ORDERS),
        "n": list(NS),
        "date": time.strftime("%Y-%m-%d"),
    }
    write_json(args.out, meta, cells=cells)
    heading = (
        f"`{meta['command'].strip()}` (R = {args.reps} a cell, n ∈ {list(NS)}, jax "
        f"{jax.__version__}, {meta['date']}): the first n per side whose mean bound reaches ½ "
        f"and 0.9 of ε(λ)"
    )
    write_table(args.out.with_suffix(".md"), heading, format_table(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
