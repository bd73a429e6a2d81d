"""Calibration study for the default (h, τ, β) of ``rdpjax.lower_bound``.

For the Gaussian and Laplace mechanisms of paper 000 (b = 5, pair (21): P = law of 1 + noise,
Q = law of noise), and the discrete randomized response (ε0 = 1.5, m = 10: 1024 outputs, pair
(21)), and n = 1e4 … 1e7 per side, draws R replications with ``vmap`` over keys
(in batches, one compiled call per cell) and reports, per order λ:

* coverage: the fraction of replications whose 95% bound (level α = 0.05 for that λ alone,
  bias-corrected as ``rdpjax.lower_bound`` does by default) is ≤ the exact D_λ, with a
  Clopper–Pearson 95% interval;
* simultaneous coverage of the Bonferroni family over λ = 2, 5, 7;
* tightness: mean of lower / exact (for the nulls, where the truth is 0: the mean bound);
* bias/se: mean (bias-corrected estimate − exact) / s.e.; sd/se: spread over the mean s.e.

Three more cells probe the regime where a first-order bound fails (P ≈ Q, the plug-in's bias
dominating its first-order error): ``gaussian_null`` (N(0, 25) vs itself), ``uniform_null``
(50 equally likely values vs the same) and ``k_rr_weak`` (Warner's k-RR, k = 100, α = 0.5).

Reproduce the README table:

    .venv/bin/python benchmarks/calibration/calibrate.py --reps 200 --out
        benchmarks/results/calibration/calibrate.json

Explore other settings (standardized units, see ``rdpjax.Defaults``):

    .venv/bin/python benchmarks/calibration/calibrate.py --n 1e4 1e5 --bandwidth-factor 0.3
        --floor-factor 0.2
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

import rdpjax
from rdpjax.estimator.api import Defaults, plan_bound
from rdpjax.estimator.grid import LAYOUTS
from rdpjax.estimator.sharding import draw_mesh, map_over_devices, replication_batch_size
from rdpjax.mechanisms.databases import paper_pair

ORDERS = (2.0, 5.0, 7.0)
SCALE = 5.0


RR_EPS0, RR_M = 1.5, 10


def _exact(mechanism):
    """λ ↦ the zoo's exact D_λ on pair (21) (closed forms of docs/methods.md §3)."""
    x, x_prime = paper_pair(RR_M)
    return lambda lam: mechanism.divergence(lam, x, x_prime)


def rr_codes(key, n: int, first: float):
    """Binary randomized response on x = (first, 0, …, 0) ∈ {0,1}^m, the vector coded in binary."""
    x = jnp.zeros(RR_M).at[0].set(first)
    keep = jax.random.bernoulli(key, math.exp(RR_EPS0) / (1 + math.exp(RR_EPS0)), (n, RR_M))
    bits = jnp.where(keep, x, 1.0 - x)
    return (bits @ (2 ** jnp.arange(RR_M))).astype(jnp.int32)


def _additive(noise):
    """Pair (21) for additive noise: P = law of 1 + noise, Q = law of noise."""

    def draw(key, n):
        kp, kq = jax.random.split(key)
        return 1.0 + noise(kp, (n,)), noise(kq, (n,))

    return draw


def _rr(key, n):
    kp, kq = jax.random.split(key)
    return rr_codes(kp, n, 1.0), rr_codes(kq, n, 0.0)


NULL_SUPPORT = 50
KRR = rdpjax.mechanisms.KaryRandomizedResponse(k=100, alpha=0.5)


def _uniform_null(key, n):
    kp, kq = jax.random.split(key)
    return (jax.random.randint(kp, (n,), 0, NULL_SUPPORT),) + (
        jax.random.randint(kq, (n,), 0, NULL_SUPPORT),
    )


def _krr(key, n):
    kp, kq = jax.random.split(key)
    return KRR.sample(kp, 0, n), KRR.sample(kq, 1, n)


def _zero(lam):
    return 0.0


# name: (draw(key, n) -> (p, q), exact D_λ, discrete support size or None for continuous)
MECHANISMS = {
    "gaussian": (
        _additive(lambda k, s: SCALE * jax.random.normal(k, s)),
        _exact(rdpjax.mechanisms.Gaussian(SCALE)),
        None,
    ),
    "laplace": (
        _additive(lambda k, s: SCALE * jax.random.laplace(k, s)),
        _exact(rdpjax.mechanisms.Laplace(SCALE)),
        None,
    ),
    # discrete, 1024 outputs
    "randomized_response": (_rr, _exact(rdpjax.mechanisms.RandomizedResponse(RR_EPS0)), 2**RR_M),
    # P = Q: the regime where a first-order bound fails (truth 0)
    "gaussian_null": (lambda k, n: tuple(SCALE * jax.random.normal(k, (2, n))), _zero, None),
    "uniform_null": (_uniform_null, _zero, NULL_SUPPORT),
    # a weak leak over many outputs: Warner's k-RR, k = 100, α = 0.5, inputs 0 vs 1
    "k_rr_weak": (_krr, lambda lam: KRR.divergence(lam, 0, 1), KRR.k),
}


def clopper_pearson(k: int, n: int, conf: float = 0.95) -> tuple[float, float]:
    a = (1 - conf) / 2
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def tight(lower, exact):
    """Mean lower / exact; None when the truth is 0 (a null: see ``mean_lower``)."""
    return float(np.mean(lower / exact)) if exact else None


def run_cell(
    name: str, n: int, reps: int, key, defaults: Defaults, batch: int, alpha: float, layout: str
):
    draw_pair, exact_fn, support = MECHANISMS[name]
    exact = np.array([exact_fn(lam) for lam in ORDERS])

    def draw(k):
        return draw_pair(k, n)

    with rdpjax.float64():
        pilot_p, pilot_q = draw(jax.random.fold_in(key, 10**6))
        plan, _, _ = plan_bound(
            pilot_p,
            pilot_q,
            ORDERS,
            alpha=alpha,
            defaults=defaults,
            support_size=support,
            discrete=None if support else False,
            layout=layout,
        )

        @jax.jit
        def study(keys):
            def one(k):
                b = plan(*draw(k))
                return b.estimate, b.bias, b.std_error, b.lower

            return map_over_devices(one, draw_mesh(), keys, batch_size=batch)

        keys = jax.random.split(key, reps)
        t0 = time.perf_counter()
        est, bias, se, lower_sim = (np.asarray(a) for a in study(keys))
        seconds = time.perf_counter() - t0
    z = stats.norm.ppf(alpha)
    corrected = est - bias
    lower = corrected + z * se  # the per-λ 95% bound (bias-corrected eq. (16), one order)
    covered = lower <= exact
    rows = []
    for i, lam in enumerate(ORDERS):
        k = int(covered[:, i].sum())
        rows.append(
            {
                "mechanism": name,
                "n": n,
                "lam": lam,
                "exact": float(exact[i]),
                "coverage": k / reps,
                "coverage_ci": clopper_pearson(k, reps),
                "tightness": tight(lower[:, i], exact[i]),
                "tightness_sd": float(np.std(lower[:, i] / exact[i])) if exact[i] else None,
                "mean_lower": float(np.mean(lower[:, i])),
                "plugin_bias_in_se": float(np.mean((est[:, i] - exact[i]) / se[:, i])),
                "estimate_bias_in_se": float(np.mean((corrected[:, i] - exact[i]) / se[:, i])),
                "se_ratio": float(np.std(corrected[:, i]) / np.mean(se[:, i])),
            }
        )
    simultaneous = float(np.mean(np.all(lower_sim <= exact, axis=1)))
    return rows, simultaneous, seconds


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", nargs="+", type=float, default=[1e4, 1e5, 1e6, 1e7])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--mechanisms", nargs="+", default=list(MECHANISMS), choices=list(MECHANISMS))
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--bandwidth-factor", type=float, default=rdpjax.DEFAULTS.bandwidth_factor)
    ap.add_argument("--floor-factor", type=float, default=rdpjax.DEFAULTS.floor_factor)
    ap.add_argument(
        "--bandwidth-exponent", type=float, default=rdpjax.DEFAULTS.bandwidth_exponent_1d
    )
    ap.add_argument("--floor-exponent", type=float, default=rdpjax.DEFAULTS.floor_exponent)
    ap.add_argument(
        "--discrete-floor-factor", type=float, default=rdpjax.DEFAULTS.discrete_floor_factor
    )
    ap.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="exact",
        help="grid layout of the continuous cells (rdpjax.plan_bound's layout=)",
    )
    ap.add_argument(
        "--scale-points",
        type=int,
        default=rdpjax.DEFAULTS.scale_points,
        help="points per sample in the pooled robust scale (rdpjax.estimator.settings)",
    )
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    defaults = dataclasses.replace(
        rdpjax.DEFAULTS,
        scale_points=args.scale_points,
        bandwidth_factor=args.bandwidth_factor,
        bandwidth_exponent_1d=args.bandwidth_exponent,
        floor_factor=args.floor_factor,
        floor_exponent=args.floor_exponent,
        discrete_floor_factor=args.discrete_floor_factor,
    )
    print(
        f"# calibrate: {defaults}, R={args.reps}, alpha={args.alpha}, layout={args.layout}, "
        f"scale points {args.scale_points}"
    )
    print(
        f"{'mechanism':19} {'n':>9} {'lam':>4} {'exact':>9} {'coverage':>9} {'95% CI':>15} "
        f"{'lower/exact':>11} {'bias/se':>8} {'sd/se':>6}"
    )
    results, key = [], jax.random.key(args.seed)
    for name in args.mechanisms:
        for n in (int(v) for v in args.n):
            key, sub = jax.random.split(key)
            batch = replication_batch_size(n, args.reps, draw_mesh())
            rows, sim, secs = run_cell(
                name, n, args.reps, sub, defaults, batch, args.alpha, args.layout
            )
            for r in rows:
                lo, hi = r["coverage_ci"]
                tightness = (
                    f"{r['tightness']:11.3f}"
                    if r["tightness"] is not None
                    else f"{r['mean_lower']:+11.1e}"
                )
                print(
                    f"{name:19} {n:9.0e} {r['lam']:4g} {r['exact']:9.6f} {r['coverage']:9.3f} "
                    f"[{lo:.3f}, {hi:.3f}] {tightness} {r['estimate_bias_in_se']:8.2f} "
                    f"{r['se_ratio']:6.2f}",
                    flush=True,
                )
            print(
                f"{'':29} simultaneous coverage (Bonferroni, 3 orders): {sim:.3f}   [{secs:.1f} s]"
            )
            results.append({"rows": rows, "simultaneous_coverage": sim, "seconds": secs})
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "command": "python benchmarks/calibration/calibrate.py "
            + " ".join(sys.argv[1:] if argv is None else argv),
            "defaults": dataclasses.asdict(defaults),
            "reps": args.reps,
            "layout": args.layout,
            "scale_points": args.scale_points,
            "alpha": args.alpha,
            "seed": args.seed,
            "jax": jax.__version__,
            "machine": platform.platform(),
        }
        args.out.write_text(json.dumps({"meta": meta, "cells": results}, indent=1))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
