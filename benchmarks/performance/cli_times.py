"""Wall time of one-off ``rdpjax`` commands: cache off, cold cache, warm cache.

    python benchmarks/performance/cli_times.py [--out benchmarks/results/performance/cli_times.json]

Each command runs as a user types it (a fresh ``python -m rdpjax.cli`` process, so the import of
jax and rdpjax is included) three times: with ``RDPJAX_NO_CACHE=1``; then with an empty
compilation cache (``RDPJAX_CACHE_DIR`` a new folder: "cold", which also writes the cache); then
again on that folder ("warm"). The machine is shared: the ratio warm / off, measured minutes apart,
is the number to read, not the seconds. The commands run from the checkout this script belongs
to (``python -m`` puts the working directory first on the path), so running another checkout's
copy of the script times that checkout's rdpjax.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

COMMANDS = {
    "bound": ["bound", "{tmp}/p.npy", "{tmp}/q.npy", "--lam", "2", "5", "7"],
    "audit gaussian --n 1e6": ["audit", "gaussian", "--n", "1e6", "--quiet"],
    "coverage gaussian --n 1e4 --reps 50": [
        "coverage",
        "gaussian",
        "--n",
        "1e4",
        "--reps",
        "50",
        "--json",
    ],  # fmt: skip
    "search laplace --steps 50 --restarts 4": [
        "search",
        "laplace",
        "--steps",
        "50",
        "--restarts",
        "4",
        "--json",
    ],  # fmt: skip
    "reproduce --quick": ["reproduce", "--quick", "--json"],
}


def _run(argv: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rdpjax.cli", *argv], env=env, capture_output=True, cwd=ROOT
    )
    seconds = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise RuntimeError(f"rdpjax {' '.join(argv)} failed:\n{done.stderr.decode()[-2000:]}")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/performance/cli_times.json")
    parser.add_argument("--commands", nargs="+", choices=list(COMMANDS), default=list(COMMANDS))
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(0)
        np.save(f"{tmp}/p.npy", 1.0 + 5.0 * rng.standard_normal(10**5))
        np.save(f"{tmp}/q.npy", 5.0 * rng.standard_normal(10**5))
        base = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "RDPJAX_"))}
        for name in args.commands:
            command = [a.format(tmp=tmp) for a in COMMANDS[name]]
            cache = Path(tmp) / f"cache-{len(rows)}"
            off = _run(command, {**base, "RDPJAX_NO_CACHE": "1"})
            cold = _run(command, {**base, "RDPJAX_CACHE_DIR": str(cache)})
            warm = _run(command, {**base, "RDPJAX_CACHE_DIR": str(cache)})
            entries = sum(1 for p in cache.iterdir() if p.name.endswith("-cache"))
            rows.append(
                {"command": f"rdpjax {name}", "off_s": off, "cold_s": cold, "warm_s": warm,
                 "warm_over_off": warm / off, "cache_entries": entries}
            )  # fmt: skip
            print(
                f"rdpjax {name:<40} off {off:6.1f} s  cold {cold:6.1f} s  warm {warm:6.1f} s "
                f"(warm/off {warm / off:.2f}; {entries} cached programs)",
                flush=True,
            )
    result = {
        "command": "python benchmarks/performance/cli_times.py",
        "machine": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average_at_end": list(os.getloadavg()),
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
