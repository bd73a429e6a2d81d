"""How many points the pooled robust scale needs: coverage, tightness and bandwidth spread of the
default bound with the scale taken on strided subsamples of 2^16, 2^12 or 2^10 points a sample.

The scale ``min(sd, IQR/1.349)`` (``rdpjax.estimator.settings``) sets the bandwidth h and the
floor τ. Its quantiles need a sort, and in a vmapped replication study at n = 10^5 the two sorts
of 2^16 points cost more than the draws (``python benchmarks/performance/throughput.py``); 2^12
points cost
a sixteenth of that, and 2^10 points a third of 2^12's (33 against 95 µs a sort of float64 bit
patterns). This study runs the same draws (same keys and seeds) under each number of points
(``--points``; the first run compared 2^16 with 2^12, ``results/calibration/calibrate_scale.md``,
the second 2^12 with 2^10, ``results/calibration/calibrate_scale_1024.md``):

* paper 000's zoo through ``benchmarks/calibration/calibrate.py``'s cells (Gaussian, Laplace,
  Gaussian null;
  one ``plan_bound`` per cell, vmapped replications, as ``rdpjax coverage`` runs them);
* the off-zoo continuous laws of ``benchmarks/calibration/calibrate_offzoo.py`` (multimodal, spiky,
  heavy
  tailed, skewed), each bound by ``rdpjax.lower_bound`` as a user calls it;
* the replication spread of the scale itself (relative sd over R draws).

Coverage is simultaneous over λ = 2, 5, 7 (α = 0.05), with a Wilson 95% interval.

    python benchmarks/calibration/calibrate_scale.py [--reps 200] [--points 4096 1024] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np
from scipy import stats

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
import calibrate  # noqa: E402
import calibrate_offzoo  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax.estimator import settings  # noqa: E402
from rdpjax.estimator.sharding import draw_mesh, replication_batch_size  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
POINTS = (2**12, 2**10)
ZOO = ("gaussian", "laplace", "gaussian_null")
OFFZOO = ("bimodal", "spike_slab", "cauchy", "student_t3", "lognormal")


def wilson(k: int, n: int) -> list[float]:
    ci = stats.binomtest(k, n).proportion_ci(method="wilson")
    return [float(ci.low), float(ci.high)]


def zoo_cell(name: str, n: int, reps: int, key) -> dict:
    batch = replication_batch_size(n, reps, draw_mesh())
    rows, simultaneous, seconds = calibrate.run_cell(
        name, n, reps, key, rdpjax.DEFAULTS, batch, 0.05, "bucketed"
    )
    k = round(simultaneous * reps)
    return {
        "study": "zoo",
        "law": name,
        "n": n,
        "simultaneous": simultaneous,
        "wilson": wilson(k, reps),
        "tightness": [r["tightness"] for r in rows],
        "mean_lower": [r["mean_lower"] for r in rows],
        "seconds": seconds,
    }


def offzoo_cell(name: str, n: int, reps: int, seed: int) -> dict:
    cell = calibrate_offzoo.run_cell(calibrate_offzoo.LAWS[name], n, reps, seed, (None,))
    e = cell["None"]
    return {
        "study": "offzoo",
        "law": name,
        "n": n,
        "simultaneous": e["simultaneous"],
        "wilson": e["simultaneous_ci"],
        "tightness": e["tightness"],
        "seconds": e["seconds"],
    }


def scale_spread(n: int, reps: int) -> dict:
    """Relative sd over ``reps`` draws of the pooled scale of two samples of n (Gaussian, and
    the two-mode mixture, whose scale is the IQR's)."""
    out = {}
    for name in ("gaussian", "bimodal"):
        law = calibrate_offzoo.LAWS[name]
        rng = np.random.default_rng(1)
        with rdpjax.float64():
            scales = []
            for _ in range(reps):
                p = law.draw(rng, n).reshape(-1, 1) + law.shift
                q = law.draw(rng, n).reshape(-1, 1)
                scales.append(float(settings._pooled_scale(p, q)[0]))
        out[name] = float(np.std(scales) / np.mean(scales))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--zoo-n", type=float, nargs="+", default=[1e4, 1e5, 1e6, 1e7])
    parser.add_argument("--offzoo-n", type=float, nargs="+", default=[1e4, 1e5])
    parser.add_argument("--points", type=int, nargs="+", default=list(POINTS))
    parser.add_argument("--out", type=Path, default=RESULTS / "calibrate_scale_1024.json")
    args = parser.parse_args(argv)
    default_points = settings.SCALE_POINTS
    cells = []
    for points in args.points:
        settings.SCALE_POINTS = points
        key = jax.random.key(2024)
        for name in ZOO:
            for n in (int(v) for v in args.zoo_n):
                key, sub = jax.random.split(key)
                cells.append({"points": points, **zoo_cell(name, n, args.reps, sub)})
                print(json.dumps(cells[-1]), flush=True)
        for name in OFFZOO:
            for n in (int(v) for v in args.offzoo_n):
                cells.append({"points": points, **offzoo_cell(name, n, args.reps, 0)})
                print(json.dumps(cells[-1]), flush=True)
        spread = {"points": points, "study": "spread", "n": 10**5}
        cells.append(spread | scale_spread(10**5, args.reps))
        print(json.dumps(cells[-1]), flush=True)
    settings.SCALE_POINTS = default_points
    given = " ".join(argv or sys.argv[1:])
    meta = {
        "command": f"python benchmarks/calibration/calibrate_scale.py {given}",
        "reps": args.reps,
        "jax": jax.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "cells": cells}, indent=1) + "\n")
    write_markdown(args.out.with_suffix(".md"), meta, cells)
    print(format_table(cells))
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


def write_markdown(path: Path, meta: dict, cells: list[dict]) -> None:
    path.write_text(
        f"`{meta['command'].strip()}` (R = {meta['reps']} a cell, jax {meta['jax']}, "
        f"{meta['date']}): simultaneous coverage over λ = 2, 5, 7 [Wilson 95%] · mean "
        "lower/exact at λ = 2 / 5 / 7 (the null: the mean bound), the same draws under each of the "
        "numbers of scale points.\n\n" + format_table(cells) + "\n"
    )


def format_table(cells: list[dict]) -> str:
    """Markdown: per law and n, simultaneous coverage [Wilson] and lower/exact at λ = 2 / 5 / 7
    (for the null, the mean bound) under each number of scale points."""
    by = {(c["study"], c["law"], c["n"], c["points"]): c for c in cells if c["study"] != "spread"}
    points = list(dict.fromkeys(c["points"] for c in cells))
    lines = [
        "| law | n | " + " | ".join(f"{p:,} points: coverage · lower/exact" for p in points) + " |",
        "|---|---|" + "---|" * len(points),
    ]
    for study, law, n, _ in sorted({k[:3] + (0,) for k in by}, key=lambda k: (k[0], k[1], k[2])):
        parts = []
        for p in points:
            c = by.get((study, law, n, p))
            if c is None:
                parts.append("—")
                continue
            lo, hi = c["wilson"]
            tight = c["tightness"]
            if tight[0] is None:  # the null: the truth is 0
                shown = " / ".join(f"{v:+.1e}" for v in c["mean_lower"])
            else:
                shown = " / ".join(f"{v:.3f}" for v in tight)
            parts.append(f"{c['simultaneous']:.3f} [{lo:.3f}, {hi:.3f}] · {shown}")
        lines.append(f"| {law.replace('_', ' ')} | {n:,} | " + " | ".join(parts) + " |")
    for c in cells:
        if c["study"] == "spread":
            lines.append(
                f"\nscale over {c['n']:,} a side, {c['points']:,} points: relative sd "
                f"{c['gaussian']:.4f} (Gaussian), {c['bimodal']:.4f} (two modes)"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
