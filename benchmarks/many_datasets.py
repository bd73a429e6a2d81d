"""One process bounding data set after data set of new sizes: memory maps, peak memory, time.

    python benchmarks/many_datasets.py [--count 250] [--layout exact|bucketed] [--budget B]

Draws ``count`` pairs of samples N(1, 25) vs N(0, 25) with sizes uniform in [1000, 20000] a side
(seed 0), bounds each with :func:`rdpjax.lower_bound` at λ = 2, 5, 7, and prints every 10 data
sets the process's memory-map count (``/proc/self/maps``), its peak resident memory and the time
so far. ``--budget`` sets ``rdpjax.bounds.PROGRAM_BUDGET`` (``0``: no budget, the behaviour
before it existed). Writes ``benchmarks/results/many_datasets_<layout>_<budget>.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

import rdpjax
from rdpjax import bounds


def _maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=250)
    parser.add_argument("--layout", choices=("exact", "bucketed"), default="exact")
    parser.add_argument("--budget", type=int, default=bounds.PROGRAM_BUDGET)
    args = parser.parse_args(argv)
    bounds.PROGRAM_BUDGET = args.budget if args.budget > 0 else 10**12
    rng = np.random.default_rng(0)
    rows, t0 = [], time.perf_counter()
    for i in range(args.count):
        n = int(rng.integers(1000, 20001))
        p, q = 1.0 + 5.0 * rng.standard_normal(n), 5.0 * rng.standard_normal(n)
        rdpjax.lower_bound(p, q, [2, 5, 7], layout=args.layout)
        if (i + 1) % 10 == 0:
            rows.append(
                {
                    "data_sets": i + 1,
                    "maps": _maps(),
                    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                    "seconds": time.perf_counter() - t0,
                }
            )
            r = rows[-1]
            print(
                f"{r['data_sets']:4d} data sets: {r['maps']:6d} maps, peak RSS "
                f"{r['peak_rss_mb']:6.0f} MB, {r['seconds']:6.1f} s",
                flush=True,
            )
    name = f"many_datasets_{args.layout}_{args.budget}.json"
    out = Path(__file__).resolve().parent / "results" / name
    command = "python benchmarks/many_datasets.py " + " ".join(
        [f"--count {args.count}", f"--layout {args.layout}", f"--budget {args.budget}"]
    )
    out.write_text(json.dumps({"command": command, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
