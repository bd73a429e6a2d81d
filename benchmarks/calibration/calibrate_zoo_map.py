"""The zoo's continuous mechanisms under ``transform="auto"``: what the default does to them.

    python benchmarks/calibration/calibrate_zoo_map.py [--reps 200] [--n 1e3 1e4 1e5 1e6 1e7]
        [--mechanisms laplace subsampled-laplace gaussian] [--out FILE]
    python benchmarks/calibration/calibrate_zoo_map.py --table
        benchmarks/results/calibration/calibrate_zoo_map.json

``benchmarks/calibration/calibrate.py`` (the README's calibration table) runs its replications
inside one
compiled program through ``plan_bound``, which takes no data-driven map; this study bounds the
same mechanisms on their reference pairs (``rdpjax.mechanisms.registry``) with
``rdpjax.lower_bound`` exactly as a user calls it, twice on the same draws: ``transform=None``
(the outputs' own KDE, what ``calibrate.py`` measures) and ``transform="auto"`` (the default,
which maps a sample whose pilot tail ratio lies outside ``AUTO_TAIL_RANGE``). λ = 2, 5, 7,
α = 0.05, simultaneous. Reported per cell: simultaneous coverage (Wilson 95% interval), mean
lower/exact per order against the closed-form D_λ, in how many replications ``auto`` mapped,
and seconds. Replication r draws from ``jax.random.key(r)`` split in two (P side, Q side), so
every n and transform sees the same keys. Writes
``benchmarks/results/calibration/calibrate_zoo_map.json`` unless ``--out`` says otherwise.
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
from _summary import summarize, write_study  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax.mechanisms import registry  # noqa: E402

ORDERS = (2.0, 5.0, 7.0)
ALPHA = 0.05
TRANSFORMS = (None, "auto")
RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"


def run_cell(name: str, n: int, reps: int) -> dict:
    entry = registry.get(name)
    mech = entry.make()
    x, xp = entry.reference_pair(mech)
    exact = np.array([float(mech.divergence(lam, x, xp)) for lam in ORDERS])
    out = {"mechanism": name, "n": n, "reps": reps, "exact": exact.tolist()}
    lower = {t: np.empty((reps, len(ORDERS))) for t in TRANSFORMS}
    seconds = dict.fromkeys(TRANSFORMS, 0.0)
    mapped = 0
    for r in range(reps):
        kp, kq = jax.random.split(jax.random.key(r))
        p = np.asarray(mech.sample(kp, x, n), np.float64).ravel()
        q = np.asarray(mech.sample(kq, xp, n), np.float64).ravel()
        for t in TRANSFORMS:
            start = time.perf_counter()
            b = rdpjax.lower_bound(p, q, ORDERS, alpha=ALPHA, discrete=False, transform=t)
            seconds[t] += time.perf_counter() - start
            lower[t][r] = b.lower
            mapped += t == "auto" and b.transform is not None
    for t in TRANSFORMS:
        # No oracle deficit: the subsampled law is no shift of the other (no closed form here).
        out[str(t)] = summarize(lower[t], exact) | {"seconds": seconds[t]}
    out["auto"]["mapped"] = mapped
    return out


def format_table(cells: list[dict]) -> str:
    lines = [
        "| mechanism | n | transform | simultaneous (95% CI) | lower/exact λ = 2 / 5 / 7 | s |",
        "|---|---|---|---|---|---|",
    ]
    for c in cells:
        for t in TRANSFORMS:
            r = c[str(t)]
            label = "none" if t is None else f"auto (mapped {r['mapped']}/{c['reps']})"
            low, high = r["simultaneous_ci"]
            tight = " / ".join(f"{v:.3f}" for v in r["tightness"])
            lines.append(
                f"| {c['mechanism']} | {c['n']:,} | {label} | {r['simultaneous']:.3f} "
                f"[{low:.3f}, {high:.3f}] | {tight} | {r['seconds']:.0f} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, nargs="+", default=[1e3, 1e4, 1e5, 1e6, 1e7])
    parser.add_argument(
        "--mechanisms", nargs="+", default=["laplace", "subsampled-laplace", "gaussian"]
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "calibrate_zoo_map.json")
    parser.add_argument("--table", type=Path, help="only print the markdown table of this JSON")
    args = parser.parse_args(argv)
    if args.table:
        print(format_table(json.loads(args.table.read_text())["cells"]))
        return 0
    cells = []
    with rdpjax.float64():
        for name in args.mechanisms:
            for n in args.n:
                cell = run_cell(name, int(n), args.reps)
                cells.append(cell)
                print("\n".join(format_table([cell]).splitlines()[-2:]), flush=True)
    command = "python benchmarks/calibration/calibrate_zoo_map.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    write_study(args.out, command, ORDERS, ALPHA, cells, format_table(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
