"""A DP-SGD step audited as a black box: optax's DP aggregation, a vector output, a learned score.

    python benchmarks/calibration/dpsgd.py [--n 1e5] [--seed 0] [--out FILE]

The mechanism is one full-batch DP-SGD step of a linear regression with d = 10 parameters at
w = 0, written with ``optax.contrib.differentially_private_aggregate`` (per-example gradients
clipped to C = 4 in ℓ2, their sum plus N(0, (σC)² I) noise, divided by the batch size B = 10,
σ = 2): its output, the parameter update, is a vector in R^10. The databases differ in one
example: x holds a canary whose gradient is clipped to norm C, x' replaces it by an example whose
gradient is zero. The step is then a Gaussian mechanism with shift Δ = clip(g_canary)/B and noise
σC/B per coordinate, so D_λ = λ‖Δ‖²B²/(2σ²C²) = λ/(2σ²) exactly (Mironov 2017, Prop. 7), and the
claim is dp_accounting's RDP of ``GaussianDpEvent(σ)`` (add/remove one: sensitivity C), the same
curve.

Rows: the learned projection (``rdpjax.audit(..., project="learn")``: no knowledge of Δ) against
the oracle projection onto Δ (all n certify) and the exact value, at λ = 2, 5, 7; and a broken
variant whose noise is N(0, σ²) instead of N(0, (σC)²) (the clipping norm forgotten in the noise
scale: actual D_λ = C² times the claim), which the audit must refute. Writes
``benchmarks/results/calibration/dpsgd.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402

import rdpjax  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
D, B, CLIP, SIGMA = 10, 10, 4.0, 2.0
ORDERS = (2.0, 5.0, 7.0)


def databases(seed: int):
    """(B, d + 1) rows [features | target]: x with a canary (large residual), x' without."""
    rng = np.random.default_rng(seed)
    rows = np.c_[rng.standard_normal((B, D)), rng.standard_normal(B)]
    x, x_prime = rows.copy(), rows.copy()
    x[0, :D] = rng.standard_normal(D)
    x[0, D] = 50.0  # the canary: gradient norm far above C, clipped to C
    x_prime[0] = 0.0  # features 0: gradient 0
    return x, x_prime


def per_example_grads(database):
    w = jnp.zeros(D)
    features, target = database[:, :D], database[:, D]

    def loss(w, a, b):
        return 0.5 * (a @ w - b) ** 2

    return jax.vmap(jax.grad(loss), (None, 0, 0))(w, features, target)


def dp_step(key, database, n):
    """n parameter updates of one DP-SGD step (optax's aggregation, fresh noise each)."""
    grads = per_example_grads(database)

    def one(k):
        tx = optax.contrib.differentially_private_aggregate(CLIP, SIGMA, key=k)
        update, _ = tx.update(grads, tx.init(jnp.zeros(D)))
        return update

    return jax.vmap(one)(jax.random.split(key, n))


def broken_step(key, database, n):
    """The clipping norm forgotten in the noise: N(0, σ²) instead of N(0, (σC)²)."""
    grads = per_example_grads(database)
    norms = jnp.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads * jnp.minimum(1.0, CLIP / norms)
    noise = SIGMA * jax.random.normal(key, (n, D))
    return (clipped.sum(0) + noise) / B


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "dpsgd.json")
    args = parser.parse_args(argv)
    import dp_accounting as dpa

    rdpjax.enable_compilation_cache()
    n = int(args.n)
    x, x_prime = databases(args.seed)
    claim = rdpjax.claims.from_dp_accounting(dpa.GaussianDpEvent(SIGMA))
    exact = np.array(ORDERS) / (2 * SIGMA**2)
    g = np.asarray(per_example_grads(jnp.asarray(x)))[0]
    shift = g * min(1.0, CLIP / np.linalg.norm(g)) / B
    rows = []
    start = time.perf_counter()
    key = jax.random.key(args.seed)
    for label, fn, project in (
        ("DP-SGD step, learned projection", dp_step, "learn"),
        ("DP-SGD step, oracle projection onto Δ", dp_step, lambda v: v @ shift),
        ("broken: noise not scaled by C, learned projection", broken_step, "learn"),
    ):
        t0 = time.perf_counter()
        mech = rdpjax.mechanisms.from_sampler(fn, name=label.split(",")[0], claim=claim)
        report = rdpjax.audit(
            key, mech, x, x_prime, list(ORDERS), n=n, project=project, progress=False
        )
        truth = exact * (CLIP**2 if fn is broken_step else 1.0)
        rows.append(
            {
                "case": label,
                "n_certified": report.n,
                "exact": truth.tolist(),
                "claimed": np.asarray(report.claimed).tolist(),
                "lower": np.asarray(report.lower).tolist(),
                "refuted": report.refuted,
                "projection": json.loads(report.settings).get("projection"),
                "seconds": time.perf_counter() - t0,
            }
        )
        r = rows[-1]
        print(
            f"{label:52s} n={r['n_certified']:7,d}  exact {'/'.join(f'{v:.3f}' for v in truth)}"
            f"  lower {'/'.join(f'{v:.3f}' for v in r['lower'])}  claimed "
            f"{'/'.join(f'{v:.3f}' for v in r['claimed'])}  "
            f"{'REFUTED' if r['refuted'] else 'not refuted'}  [{r['seconds']:.0f} s]",
            flush=True,
        )
    meta = {
        "command": f"python benchmarks/calibration/dpsgd.py --n {args.n:g} --seed {args.seed}",
        "d": D,
        "batch": B,
        "clip": CLIP,
        "noise_multiplier": SIGMA,
        "orders": ORDERS,
        "seconds": time.perf_counter() - start,
        "optax": optax.__version__,
    }
    write_json(args.out, meta, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
