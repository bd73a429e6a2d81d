"""How long ``rdpjax`` takes to answer a mistake in its arguments (issue 54: under a second).

    python benchmarks/performance/cli_mistakes.py [--repeats 10] [--out FILE.json]

Each mistake runs as a user types it, a fresh ``python -m rdpjax.cli`` process (the interpreter's
start and the imports included), ``--repeats`` times; printed: the median and the slowest wall
time, the exit status (2 expected) and the first line on stderr. As a baseline in the same
process, ``python -c "import jax"`` is timed the same way: the cost the parse now avoids (the
arguments are parsed before jax is imported). The machine is shared: read the ratio, not the
seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MISTAKES = {
    "--n abc": ["audit", "gaussian", "--n", "abc"],
    "--alpha 2": ["audit", "gaussian", "--alpha", "2"],
    "unknown option": ["audit", "gaussian", "--claim-epsilonn", "1"],
    "bound, no files": ["bound"],
    "canaries --alpha 0": ["canaries", "scores.csv", "--alpha", "0"],
}


def _time(argv: list[str]) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - t0, done.returncode, (done.stderr.splitlines() or [""])[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/performance/cli_mistakes.json"
    )
    args = parser.parse_args()

    rows = {}
    jax_times = [_time([sys.executable, "-c", "import jax"])[0] for _ in range(args.repeats)]
    baseline = statistics.median(jax_times)
    print(f"baseline `python -c 'import jax'`: median {baseline:.2f} s")
    for name, argv in MISTAKES.items():
        runs = [_time([sys.executable, "-m", "rdpjax.cli", *argv]) for _ in range(args.repeats)]
        seconds = [r[0] for r in runs]
        rows[name] = {
            "argv": argv,
            "median_s": statistics.median(seconds),
            "max_s": max(seconds),
            "exit_status": sorted({r[1] for r in runs}),
            "stderr": runs[0][2],
            "ratio_to_import_jax": statistics.median(seconds) / baseline,
        }
        print(
            f"{name:<20} median {rows[name]['median_s']:.2f} s, max {max(seconds):.2f} s "
            f"({rows[name]['ratio_to_import_jax']:.2f}x import jax), exit "
            f"{rows[name]['exit_status']}: {runs[0][2][:70]}"
        )
    result = {
        "command": "python benchmarks/performance/cli_mistakes.py",
        "machine": platform.platform(),
        "repeats": args.repeats,
        "import_jax_median_s": baseline,
        "mistakes": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
