"""The alternative to the wide order grid: a pilot split that picks one order, measured.

    python benchmarks/calibration/claim_pilot.py [--reps 200] [--fraction 0.2] [--out FILE.json]

For each audit of n outputs per side, the pilot variant spends ``fraction · n`` of them on a
pilot: it bounds ε(λ) on ``rdpjax.claims.orders.CLAIM_ORDERS`` and picks the order where
(estimate − claim) / standard error is largest; the other ``(1 − fraction) · n`` draws, independent
of the pilot, certify that one order (both directions, Bonferroni over 2 bounds). Because the
order is chosen before the certifying draws exist, the certified bound keeps its level. The
claim is refuted when the certified bound exceeds it.

Compared, with R replications per cell (pilot and certification from independent keys), with
the default the library ships (``benchmarks/calibration/claim_orders.py``: all n on the whole grid,
Bonferroni over 18 bounds; its JSON is read for the comparison when present): the rate of
refuting a false claim (power), and of refuting each mechanism's exact curve (false alarms).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import numpy as np

from rdpjax import claims
from rdpjax import mechanisms as m
from rdpjax.claims.orders import CLAIM_ORDERS
from rdpjax.studies import coverage, wilson_interval

SEED_PILOT, SEED_CERT = 101, 202


def cells():
    """(label, mechanism, claim or None for its exact curve, its label in claim_orders.json)."""
    gauss, rr = m.Gaussian(5.0), m.RandomizedResponse(1.5)
    lee, lyu = m.SparseVector(1.0, variant="lee_clifton"), m.SparseVector(1.0, variant="lyu")
    return [
        ("Gaussian b=5 vs zCDP ρ=1/100 (σ² error)", gauss, claims.zcdp(1 / 100), None),
        ("Laplace b=5 vs ε-DP ε=0.1 (sensitivity halved)", m.Laplace(5.0), claims.pure_dp(0.1),
         None),
        ("Sparse vector (Lee-Clifton) vs ε-DP ε=1", lee, claims.pure_dp(1.0), None),
        ("Gaussian b=5 vs its exact curve", gauss, None, "Gaussian b=5"),
        ("Randomized response ε0=1.5 vs its exact curve", rr, None, "Randomized response ε0=1.5"),
        ("Sparse vector (Lyu) vs its exact curve", lyu, None, "Sparse vector (Lyu, correct) ε=1"),
    ]  # fmt: skip


def _bounds(mech, orders, n, reps, seed):
    x, xp = mech.reference_pair()
    return coverage(
        jax.random.key(seed), mech, x, xp, list(orders), n=n, reps=reps, both_directions=True
    )


def pilot_split(mech, claim, n: int, reps: int, fraction: float) -> dict:
    """Refutation count of the pilot-split audit over ``reps`` replications."""
    grid = np.asarray(CLAIM_ORDERS)
    n_pilot = max(2, int(round(fraction * n)))
    pilot = _bounds(mech, grid, n_pilot, reps, SEED_PILOT)
    truth = np.asarray(pilot.exact)
    claimed = truth if claim is None else claim(grid)
    z = (np.asarray(pilot.estimate) - claimed) / np.asarray(pilot.std_error)
    chosen = np.argmax(z, axis=1)  # (reps,): the order each pilot picks
    lower = np.empty(reps)
    for j, lam in enumerate(grid):  # certify each order once; keep each replication's pick
        picked = chosen == j
        if picked.any():
            cert = _bounds(mech, [lam], n - n_pilot, reps, SEED_CERT)
            lower[picked] = np.asarray(cert.lower)[picked, 0]
    hits = int((lower > claimed[chosen]).sum())
    return {
        "refuted": hits,
        "rate": hits / reps,
        "ci95": list(wilson_interval(hits, reps)),
        "orders_chosen": {f"{lam:g}": int((chosen == j).sum()) for j, lam in enumerate(grid)},
        "n_pilot": n_pilot,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--fraction", type=float, default=0.2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5])
    parser.add_argument("--out", default="benchmarks/results/calibration/claim_pilot.json")
    parser.add_argument(
        "--grid-results", default="benchmarks/results/calibration/claim_orders.json"
    )
    args = parser.parse_args(argv)
    grid_rates = {}
    if Path(args.grid_results).exists():
        for row in json.loads(Path(args.grid_results).read_text())["rows"]:
            if row["grid"] == "default":
                grid_rates[(row["mechanism"], row["n"])] = row["refuted"]["rate"]
    rows = []
    for label, mech, claim, grid_label in cells():
        for n in args.sizes:
            t0 = time.perf_counter()
            res = pilot_split(mech, claim, n, args.reps, args.fraction)
            grid_rate = grid_rates.get((grid_label or label, n))
            rows.append(
                {"cell": label, "n": n, "claim_is_true": claim is None, "pilot_split": res,
                 "wide_grid_rate": grid_rate, "seconds": round(time.perf_counter() - t0, 1)}
            )  # fmt: skip
            shown = "—" if grid_rate is None else f"{grid_rate:.3f}"
            print(
                f"{label:<52} n={n:<7.0e} pilot split {res['rate']:.3f} "
                f"[{res['ci95'][0]:.3f}, {res['ci95'][1]:.3f}]  wide grid {shown}  "
                f"orders chosen {res['orders_chosen']}  ({rows[-1]['seconds']} s)",
                flush=True,
            )
    out = {
        "command": "python benchmarks/calibration/claim_pilot.py",
        "reps": args.reps,
        "fraction": args.fraction,
        "seeds": [SEED_PILOT, SEED_CERT],
        "jax": jax.__version__,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
