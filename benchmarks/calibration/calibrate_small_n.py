"""Small-n validity of the relative-frequency bound: many values, few samples per value.

    python benchmarks/calibration/calibrate_small_n.py [--reps 400] [--floor-counts 4] [--out FILE]

Cells: P and Q on K values (K = 10, 100, 1000), n = 200 … 10⁵ outputs a side, either a null
(both uniform) or a leak (P doubles the probability of a tenth of the values, Q uniform). Each
cell draws ``reps`` replications in one vmapped call (``rdpjax.plan_bound`` with the support
``[0, K)``, then the plan on every replication, as ``rdpjax.lower_bound`` computes it) at
λ = 2, 5, 7 in both directions (six bounds, Bonferroni), and reports the simultaneous coverage —
the fraction of replications in which every reported bound lay below the exact divergence of
its direction — with its Wilson 95% interval (scipy), the per-order coverage, and the mean bound
(nulls: the truth is 0) or the mean lower/exact (leaks, against the larger direction).

``--floor-counts c`` sets ``Defaults.discrete_floor_counts`` (the floor is never below c/n;
``0`` is the rule before it existed). Writes
``benchmarks/results/calibration/calibrate_small_n_c<c>.json`` unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

import rdpjax
from rdpjax.estimator.api import plan_bound

ORDERS = (2.0, 5.0, 7.0)
SIZES = (200, 500, 1_000, 2_000, 5_000, 10_000, 100_000)
SUPPORTS = (10, 100, 1000)
RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"


def _laws(k: int, leak: bool) -> tuple[np.ndarray, np.ndarray]:
    w = np.ones(k)
    if leak:
        w[: max(1, k // 10)] = 2.0
    return w / w.sum(), np.full(k, 1.0 / k)


def _renyi(p: np.ndarray, q: np.ndarray, lam: float) -> float:
    return float(np.log(np.sum(p**lam * q ** (1.0 - lam))) / (lam - 1.0))


def run_cell(k: int, n: int, leak: bool, reps: int, key, defaults) -> dict:
    p_law, q_law = _laws(k, leak)
    truth = np.array([[_renyi(p_law, q_law, lam), _renyi(q_law, p_law, lam)] for lam in ORDERS])
    cdf = jnp.asarray(np.cumsum(p_law)[:-1])  # inverse-CDF draws: O(n log K), not O(n K)

    def draw(kk):
        kp, kq = jax.random.split(kk)
        codes_p = jnp.searchsorted(cdf, jax.random.uniform(kp, (n,)), side="right")
        return codes_p.astype(jnp.int32), jax.random.randint(kq, (n,), 0, k)

    t0 = time.perf_counter()
    with rdpjax.float64():
        pilot = [np.asarray(a) for a in draw(jax.random.fold_in(key, 10**6))]
        plan, _, _ = plan_bound(
            *pilot, ORDERS, support_size=k, both_directions=True, defaults=defaults
        )

        @jax.jit
        def study(keys):
            def one(kk):
                b = plan(*draw(kk))
                return b.lower, b.direction

            return jax.lax.map(one, keys, batch_size=min(reps, 100))

        lower, direction = (np.asarray(a) for a in study(jax.random.split(key, reps)))
    seconds = time.perf_counter() - t0
    target = np.where(direction == 0, truth[:, 0], truth[:, 1])  # (reps, orders)
    held = lower <= target
    k_all = int(held.all(axis=1).sum())
    ci = stats.binomtest(k_all, reps).proportion_ci(method="wilson")
    largest = truth.max(axis=1)
    return {
        "support": k,
        "n": n,
        "law": "leak" if leak else "null",
        "exact": largest.tolist(),
        "simultaneous": k_all / reps,
        "simultaneous_ci": [float(ci.low), float(ci.high)],
        "coverage": held.mean(axis=0).tolist(),
        "mean_lower": lower.mean(axis=0).tolist(),
        "tightness": (lower.mean(axis=0) / largest).tolist() if leak else None,
        "seconds": seconds,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--floor-counts", type=float, default=rdpjax.DEFAULTS.discrete_floor_counts)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    defaults = dataclasses.replace(rdpjax.DEFAULTS, discrete_floor_counts=args.floor_counts)
    out = args.out or RESULTS / f"calibrate_small_n_c{args.floor_counts:g}.json"
    key = jax.random.key(args.seed)
    cells = []
    print(f"# floor ≥ {args.floor_counts:g}/n, R = {args.reps}, λ = 2, 5, 7, both directions")
    for k in SUPPORTS:
        for leak in (False, True):
            for n in SIZES:
                key, sub = jax.random.split(key)
                cell = run_cell(k, n, leak, args.reps, sub, defaults)
                cells.append(cell)
                lo, hi = cell["simultaneous_ci"]
                shown = cell["tightness"] if leak else cell["mean_lower"]
                print(
                    f"K={k:5d} {cell['law']:4s} n={n:7,d}: simultaneous "
                    f"{cell['simultaneous']:.3f} [{lo:.3f}, {hi:.3f}]  per order "
                    f"{' / '.join(f'{v:.3f}' for v in cell['coverage'])}  "
                    f"{'lower/exact' if leak else 'mean lower'} "
                    f"{' / '.join(f'{v:+.3f}' for v in shown)}  [{cell['seconds']:.1f} s]",
                    flush=True,
                )
    meta = {
        "command": "python benchmarks/calibration/calibrate_small_n.py "
        f"--reps {args.reps} --floor-counts {args.floor_counts:g} --seed {args.seed}",
        "defaults": dataclasses.asdict(defaults),
        "jax": jax.__version__,
        "machine": platform.platform(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "cells": cells}, indent=1) + "\n")
    worst = min(cells, key=lambda c: c["simultaneous"])
    print(
        f"worst cell: K={worst['support']} {worst['law']} n={worst['n']:,}: "
        f"{worst['simultaneous']:.3f}; wrote {out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
