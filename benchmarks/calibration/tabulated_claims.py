"""Tabulated RDP claims (an accountant's 151 orders): the claim grid vs every tabulated order.

    PYTHONPATH=. python benchmarks/calibration/tabulated_claims.py [--reps 200] [--n 10000]

(``PYTHONPATH=.``: the checkout's rdpjax, not an installed one; the JSON records which.)

An accountant such as Opacus reports ε(λ) at 151 orders (1.1, 1.2, …, 10.9 and 12, …, 63). Passed
to :func:`rdpjax.audit` as ``rdpjax.claims.rdp(table)`` with ``lam=None``, such a claim is now
bounded on the claim grid (:func:`rdpjax.claims.orders.tabulated_claim_orders`: 9 orders
1.5 … 30 at n ≥ 10⁴, so 18 simultaneous bounds); it used to be bounded at all 151 of its own
orders (302 bounds, each at α/302). Either way the bound at λ is compared with ``claim(λ)`` =
the smallest tabulated value at an order ≥ λ (D_λ is non-decreasing in λ).

Per mechanism, with R replications at n outputs per side (both directions, α = 0.05, the same
draws for both order sets; vmapped by :func:`rdpjax.studies.coverage`):

* **false refutations** of the *true* table: the exact ε(λ) (max over both directions of D_λ
  on the reference pair) at the 151 orders — the hardest true tabulated claim. Must be ≤ α.
* **power**: refutation rate of the false tables ``factor × exact`` (0.5, and 0.7, 0.8, 0.9 where
  the difference between the order sets shows).

Mechanisms: the Gaussian mechanism with b = √10 (sensitivity 1: D_λ = λ/20, D_2 = 0.1) and
randomized response ε0 = 1.5 on 10 bits (1024 outputs). Rates with Wilson 95% intervals.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import numpy as np

import rdpjax
from rdpjax import claims
from rdpjax import mechanisms as m
from rdpjax.auditing.draws import exact_divergences
from rdpjax.claims.orders import default_orders
from rdpjax.studies import coverage, wilson_interval

ALPHA = 0.05
OPACUS_ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)), np.float64)
"""Opacus' ``RDPAccountant.DEFAULT_ALPHAS`` (opacus/accountants/rdp.py): 151 orders."""
FACTORS = (1.0, 0.9, 0.8, 0.7, 0.5)


def cells():
    return [
        ("Gaussian b=sqrt(10) (D_2 = 0.1)", m.Gaussian(10.0**0.5)),
        ("Randomized response eps0=1.5 (10 bits)", m.RandomizedResponse(1.5)),
    ]


def _rate(hits: int, reps: int) -> dict:
    low, high = wilson_interval(hits, reps)
    return {"count": hits, "rate": hits / reps, "ci95": [low, high]}


def run(reps: int, n: int, seed: int, which: list[int] | None = None) -> dict:
    rows, refuted_by = [], {}
    for index, (label, mech) in enumerate(cells()):
        if which is not None and index not in which:
            continue
        x, xp = mech.reference_pair()
        exact_table = np.asarray(
            exact_divergences(mech, x, xp, list(OPACUS_ORDERS), True), np.float64
        )
        true_claim = claims.rdp(exact_table, orders=OPACUS_ORDERS)
        order_sets = {
            "claim grid (default)": default_orders(true_claim, n),
            "all 151 tabulated orders (before)": OPACUS_ORDERS,
        }
        for set_name, orders in order_sets.items():
            t = time.perf_counter()
            res = coverage(
                jax.random.key(seed), mech, x, xp, list(orders), n=n, reps=reps,
                both_directions=True,
            )  # fmt: skip
            lower = np.asarray(res.lower)  # (reps, L)
            seconds = round(time.perf_counter() - t, 1)
            for factor in FACTORS:
                claim = claims.rdp(factor * exact_table, orders=OPACUS_ORDERS)
                claimed = claim(orders)  # min of the table at orders ≥ λ
                above = lower > claimed
                flags = np.any(above, axis=1)
                refuted_by[(label, set_name, factor)] = flags
                hits = int(flags.sum())
                rows.append(
                    {
                        "mechanism": label,
                        "n": n,
                        "orders": set_name,
                        "n_orders": int(len(orders)),
                        "n_bounds": 2 * int(len(orders)),
                        "table_factor": factor,
                        "kind": "true claim" if factor == 1.0 else "false claim",
                        "refuted": _rate(hits, reps),
                        "per_order_refuting": above.mean(axis=0).round(4).tolist()
                        if len(orders) <= 20
                        else None,
                        "seconds_for_bounds": seconds,
                    }
                )
                _print(rows[-1])
    paired = []
    for label, _ in cells():
        for factor in FACTORS:
            grid = refuted_by.get((label, "claim grid (default)", factor))
            every = refuted_by.get((label, "all 151 tabulated orders (before)", factor))
            if grid is None or every is None:
                continue
            paired.append(
                {
                    "mechanism": label,
                    "table_factor": factor,
                    "both": int(np.sum(grid & every)),
                    "grid_only": int(np.sum(grid & ~every)),
                    "all_151_only": int(np.sum(~grid & every)),
                    "neither": int(np.sum(~grid & ~every)),
                }
            )
    return {
        "command": (
            f"PYTHONPATH=. python benchmarks/calibration/tabulated_claims.py --reps {reps} --n {n}"
        ),
        "rdpjax": str(Path(rdpjax.__file__).parent),
        "reps": reps,
        "alpha": ALPHA,
        "seed": seed,
        "table_orders": OPACUS_ORDERS.tolist(),
        "jax": jax.__version__,
        "rows": rows,
        "paired_same_draws": paired,
    }


def _print(row: dict) -> None:
    r = row["refuted"]
    print(
        f"{row['mechanism']:<40} n={row['n']:<7.0e} {row['orders']:<34} "
        f"table×{row['table_factor']:<4} refuted {r['rate']:.3f} "
        f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]  ({row['seconds_for_bounds']} s)",
        flush=True,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=10**4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", type=int, nargs="*", default=None, help="cell indices")
    parser.add_argument("--out", default="benchmarks/results/calibration/tabulated_claims.json")
    args = parser.parse_args(argv)
    print(f"rdpjax from {Path(rdpjax.__file__).parent}", flush=True)
    result = run(args.reps, args.n, args.seed, args.only)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
