"""One process bounding data set after data set of new sizes: memory maps, peak memory, time.

    python benchmarks/performance/many_datasets.py [--count 250] [--layout bucketed|exact]
        [--budget B]
        [--compilation-cache]

Draws ``count`` pairs of samples N(1, 25) vs N(0, 25) with sizes uniform in [1000, 20000] a side
(seed 0), bounds each with :func:`rdpjax.lower_bound` at λ = 2, 5, 7, and prints every 10 data
sets the process's memory-map count (``/proc/self/maps``), its peak resident memory, the number
of XLA compilations so far (``jax.monitoring``) and the time so far. ``--budget`` sets
``rdpjax._internal.programs.PROGRAM_BUDGET`` (``0``: no budget). ``--compilation-cache`` runs with
the compilation cache on (``rdpjax.enable_compilation_cache`` on an empty temporary folder, as the
command line has it). Writes
``benchmarks/results/performance/many_datasets_<layout>_<budget>[_cached].json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

import rdpjax
from rdpjax._internal import programs


def _maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=250)
    parser.add_argument("--layout", choices=("bucketed", "exact"), default="bucketed")
    parser.add_argument("--budget", type=int, default=programs.PROGRAM_BUDGET)
    parser.add_argument("--compilation-cache", action="store_true")
    args = parser.parse_args(argv)
    folder = None
    if args.compilation_cache:
        folder = tempfile.mkdtemp(prefix="rdpjax-cache-")
        os.environ.pop("RDPJAX_NO_CACHE", None)
        os.environ["RDPJAX_CACHE_DIR"] = folder
        if rdpjax.enable_compilation_cache() is None:
            raise SystemExit("the compilation cache could not be turned on")
    programs.PROGRAM_BUDGET = args.budget if args.budget > 0 else 10**12
    compiles = []

    def listen(event, duration, **kw):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(duration)

    jax.monitoring.register_event_duration_secs_listener(listen)
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
                    "compilations": len(compiles),
                    "compile_seconds": sum(compiles),
                    "seconds": time.perf_counter() - t0,
                }
            )
            r = rows[-1]
            print(
                f"{r['data_sets']:4d} data sets: {r['maps']:6d} maps, peak RSS "
                f"{r['peak_rss_mb']:6.0f} MB, {r['compilations']:4d} compilations, "
                f"{r['seconds']:6.1f} s",
                flush=True,
            )
    # A first call on a new size whose bucket (and grid layout) was seen: nothing to compile.
    # One sample with its extremes first, cut to sizes 9,000 … 9,900 (bucket 10,240): the
    # range is fixed and h moves by under 3%, so the layout stays put (checked below).
    base = 5.0 * rng.standard_normal(10_000)
    base[:2] = [-25.0, 25.0]
    firsts, shapes, before = [], set(), len(compiles)
    for n in range(9_000, 10_000, 100):
        t = time.perf_counter()
        b = rdpjax.lower_bound(1.0 + base[:n], base[::-1][:n], [2, 5, 7], layout=args.layout)
        firsts.append(time.perf_counter() - t)
        shapes.add(b.grid_shape)
    new_size = {
        "sizes": "9,000 … 9,900 a side, step 100 (bucket 10,240)",
        "grid_shapes": sorted(shapes),
        "seconds_first_call": firsts,
        "compilations": len(compiles) - before,
    }
    print(
        f"first calls on 10 new sizes of bucket 10,240 ({len(shapes)} grid layout(s)): "
        f"{1e3 * min(firsts[1:]):.1f}–{1e3 * max(firsts[1:]):.1f} ms after the first "
        f"({1e3 * firsts[0]:.0f} ms), {new_size['compilations']} compilations in all",
        flush=True,
    )
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    cached = "_cached" if folder is not None else ""
    name = f"many_datasets_{args.layout}_{args.budget}{cached}.json"
    out = Path(__file__).resolve().parents[1] / "results" / "performance" / name
    command = "python benchmarks/performance/many_datasets.py " + " ".join(
        [f"--count {args.count}", f"--layout {args.layout}", f"--budget {args.budget}"]
        + (["--compilation-cache"] if folder is not None else [])
    )
    result = {"command": command, "rows": rows, "new_size_of_a_seen_bucket": new_size}
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
