"""Compile and run time of one bound program, with the second-order terms against without.

The bound (:meth:`rdpjax.BoundPlan.bound`, counts → eq. (16) at λ = 2, 5, 7) is what every new
grid layout compiles. This times its XLA compilation (``jit(...).lower(...).compile()``, after
``jax.clear_caches()``, best of ``--repeats``) and its warm run (best of 20) with
``second_order=True`` (the default) and, as the baseline in the same process, with
``second_order=False`` (the paper's first-order bound: a smaller program), and counts what the
compiled program holds (fusions and FFTs in its entry computation).

    python benchmarks/performance/bound_compile.py [--repeats 3]
        [--out benchmarks/results/performance/bound_compile.json]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402

import rdpjax  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "performance"
ORDERS = (2.0, 5.0, 7.0)
# (name, P sampler, Q sampler): P vs Q shifted by 0.3 sd; n = 1e4 and 1e5 give two grid sizes.
CASES = {
    "1-D gaussian n=1e4": (1, 10**4, False),
    "1-D gaussian n=1e5": (1, 10**5, False),
    "2-D gaussian n=1e4": (2, 10**4, False),
    "discrete, 50 values n=1e4": (1, 10**4, True),
}


def _samples(d: int, n: int, discrete: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    if discrete:
        return rng.integers(0, 50, n), rng.binomial(49, 0.52, n)
    shape = (n,) if d == 1 else (n, d)
    return rng.normal(size=shape), rng.normal(size=shape) + 0.3


def _entry_counts(text: str) -> dict:
    entry = text[text.index("ENTRY") :]
    return {
        "fusions": len(re.findall(r"= \S+ fusion\(", entry)),
        "ffts": len(re.findall(r"= \S+ fft\(", entry)),
    }


def time_program(plan, binned, repeats: int) -> dict:
    compiles = []
    for _ in range(repeats):
        jax.clear_caches()
        lowered = jax.jit(plan.bound).lower(binned)
        start = time.perf_counter()
        compiled = lowered.compile()
        compiles.append(time.perf_counter() - start)
    jax.block_until_ready(compiled(binned))
    runs = []
    for _ in range(20):
        start = time.perf_counter()
        jax.block_until_ready(compiled(binned))
        runs.append(time.perf_counter() - start)
    return {"compile_seconds": min(compiles), "run_seconds": min(runs)} | _entry_counts(
        compiled.as_text()
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "bound_compile.json")
    args = parser.parse_args(argv)
    rows = []
    with rdpjax.float64():
        for name, (d, n, discrete) in CASES.items():
            p, q = _samples(d, n, discrete)
            row: dict = {"case": name}
            for second_order in (False, True):
                plan, pp, qq = rdpjax.plan_bound(
                    p, q, ORDERS, discrete=discrete, second_order=second_order
                )
                binned = jax.jit(plan.bin)(pp, qq)
                row["grid"] = list(plan.shape)
                row["second_order" if second_order else "first_order"] = time_program(
                    plan, binned, args.repeats
                )
            so, fo = row["second_order"], row["first_order"]
            row["compile_ratio"] = so["compile_seconds"] / fo["compile_seconds"]
            row["run_ratio"] = so["run_seconds"] / fo["run_seconds"]
            rows.append(row)
            print(
                f"{name:28s} grid {' × '.join(map(str, row['grid'])):>11s}: compile "
                f"{so['compile_seconds']:.2f} s ({so['fusions']} fusions, {so['ffts']} FFTs) "
                f"against first-order {fo['compile_seconds']:.2f} s ({fo['fusions']}, "
                f"{fo['ffts']}) → {row['compile_ratio']:.2f}×; run {1e3 * so['run_seconds']:.2f} "
                f"ms against {1e3 * fo['run_seconds']:.2f} ms → {row['run_ratio']:.2f}×",
                flush=True,
            )
    command = "python benchmarks/performance/bound_compile.py " + " ".join(argv or sys.argv[1:])
    write_json(args.out, {"command": command.strip(), "jax": jax.__version__}, cases=rows)
    print(f"reproduce: {command.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
