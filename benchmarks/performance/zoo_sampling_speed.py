"""Sampling speed of the mechanism zoo against ``jax.random`` (issue 3's performance claim).

For every sampling code path of the zoo, the time to draw n = 1e7 outputs (compiled, warm, best
of ``--reps``) divided by the time ``jax.random.normal`` takes for 1e7 values, and by the time it
takes for as many values as the output holds (n·d for vector outputs). Library defaults (the
partitionable Threefry PRNG); CPU unless JAX finds an accelerator.

    python benchmarks/performance/zoo_sampling_speed.py [--n 10000000] [--reps 3]

Writes ``benchmarks/results/performance/zoo_sampling_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import sys
import time

import jax
import jax.numpy as jnp

from rdpjax.mechanisms import reference_zoo

SKIP = {  # same sampling code as another row
    "Subsampled Gaussian b=5, γ=0.5",
    "Orthogonal series α=1, k=2",
    "Orthogonal series α=1, k=2, literal",
    "Report noisy max ε=1 (exponential)",
    "Sparse vector ε=1, c=1 (Lee-Clifton)",
    "Sparse vector ε=1 (Chen)",
}


def best_time(fn, reps: int) -> float:
    jax.block_until_ready(fn())  # compile and warm up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/performance/zoo_sampling_speed.json")
    args = parser.parse_args()
    print("command:", " ".join([sys.executable, *sys.argv]))
    n, key = args.n, jax.random.key(0)

    normal = jax.jit(lambda k, size: jax.random.normal(k, (size,)), static_argnums=1)
    t_normal = best_time(lambda: normal(key, n), args.reps)
    print(f"jax.random.normal, {n:.0e} values: {t_normal:.3f} s on {jax.devices()[0]}")
    rows = []
    for entry in reference_zoo():
        if entry.label in SKIP:
            continue
        mech, x = entry.mechanism, jnp.asarray(entry.x)
        t_mech = best_time(lambda mech=mech, x=x: mech.sample(key, x, n), args.reps)
        size = int(
            jax.eval_shape(
                lambda mech=mech, x=x: mech.sample(key, x, n),
            ).size
        )
        t_same = t_normal if size == n else best_time(lambda s=size: normal(key, s), args.reps)
        row = {
            "mechanism": entry.label,
            "seconds": t_mech,
            "ratio_to_normal_n": t_mech / t_normal,
            "output_values": size,
            "ratio_to_normal_same_count": t_mech / t_same,
        }
        rows.append(row)
        print(
            f"{entry.label:<42} {t_mech:7.3f} s  ×{row['ratio_to_normal_n']:6.1f} vs normal(n)"
            f"  ×{row['ratio_to_normal_same_count']:5.1f} vs normal({size:.0e})"
        )
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"n": n, "reps": args.reps, "device": str(jax.devices()[0]), "jax": jax.__version__}
    meta["machine"] = platform.processor() or platform.machine()
    out.write_text(json.dumps({"meta": meta, "normal_seconds": t_normal, "rows": rows}, indent=1))
    print("wrote", out)


if __name__ == "__main__":
    main()
