"""The main job of ``make demo``: lower bounds for the additive mechanisms of paper 000.

The Gaussian and Laplace mechanisms with b = 5 on the databases (21) of arXiv:2212.04739v3,
``x = (1, 0, …, 0)`` and ``x' = (0, …, 0)``: the sum statistic is 1 on x and 0 on x', so the
outputs are ``1 + Y`` and ``Y``. Exact values from §V of the paper.
"""

from __future__ import annotations

import json
import time

import jax
import numpy as np

from rdpjax._table import Column, text_table
from rdpjax.estimator.api import lower_bound
from rdpjax.mechanisms import Gaussian, Laplace
from rdpjax.mechanisms.databases import paper_pair

ORDERS = (2.0, 5.0, 7.0)
SCALE = 5.0


def _exact(mechanism):
    """λ ↦ the zoo's exact D_λ on pair (21) (the closed forms of paper 000 §V)."""
    x, x_prime = paper_pair()
    return lambda lam: mechanism.divergence(lam, x, x_prime)


def _draws(key, n: int):
    kg, kl = jax.random.split(key)
    kg1, kg2 = jax.random.split(kg)
    kl1, kl2 = jax.random.split(kl)
    return {
        "Gaussian": (
            1.0 + SCALE * jax.random.normal(kg1, (n,)),
            SCALE * jax.random.normal(kg2, (n,)),
            _exact(Gaussian(SCALE)),
        ),
        "Laplace": (
            1.0 + SCALE * jax.random.laplace(kl1, (n,)),
            SCALE * jax.random.laplace(kl2, (n,)),
            _exact(Laplace(SCALE)),
        ),
    }


def run_demo(
    *, n: int = 10**6, seed: int = 0, alpha: float = 0.05, as_json: bool = False
) -> list[dict]:
    """Print (and return) the demo table."""
    rows = []
    t0 = time.perf_counter()
    for name, (p, q, exact_fn) in _draws(jax.random.key(seed), n).items():
        bound = lower_bound(np.asarray(p), np.asarray(q), ORDERS, alpha=alpha)
        for i, lam in enumerate(ORDERS):
            exact = exact_fn(lam)
            lower = float(bound.lower[i])
            rows.append(
                {
                    "mechanism": name,
                    "lam": lam,
                    "exact": exact,
                    "estimate": float(bound.estimate[i]),
                    "lower": lower,
                    "std_error": float(bound.std_error[i]),
                    "lower_over_exact": lower / exact,
                    "valid": lower <= exact,
                }
            )
    seconds = time.perf_counter() - t0
    if as_json:
        print(
            json.dumps(
                {"n": n, "seed": seed, "alpha": alpha, "seconds": seconds, "rows": rows}, indent=1
            )
        )
        return rows
    print(f"rdpjax demo: paper 000, databases (21), b = 5, n = {n:,} per side, seed {seed}")
    print(
        f"lower bounds hold simultaneously over the 3 orders of each mechanism at {1 - alpha:.0%}\n"
    )
    columns = [
        Column("mechanism", 10, align="<"),
        Column("lambda", 6, "g"),
        *(Column(h, 9, ".6f") for h in ("exact", "estimate", "lower")),
        Column("lower/exact", 11, ".3f"),
    ]
    keys = ("mechanism", "lam", "exact", "estimate", "lower", "lower_over_exact")
    tails = ["  ok", *(f"  {'yes' if r['valid'] else 'NO'}" for r in rows)]
    print("\n".join(text_table(columns, [[r[k] for k in keys] for r in rows], tails=tails)))
    print(f"\n{seconds:.1f} s on {jax.devices()[0].platform.upper()}")
    return rows
