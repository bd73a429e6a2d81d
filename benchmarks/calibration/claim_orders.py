"""False-refutation rate and power of claim checks on the default order grid.

    python benchmarks/calibration/claim_orders.py [--reps 200] [--quick] [--out FILE.json]

With a claim and no orders, :func:`rdpjax.audit` bounds ε(λ) on
``rdpjax.claims.orders.CLAIM_ORDERS``
(``SMALL_N_CLAIM_ORDERS`` below ``SMALL_N`` outputs per side;
:func:`rdpjax.claims.orders.default_orders`),
simultaneously over orders and both directions, and refutes the claim when any bound exceeds it.
This study measures, with R replications per cell (each one a full audit's bound, vmapped by
:func:`rdpjax.studies.coverage`):

* **false refutations**: mechanisms audited against their *exact* curve ε(λ) = max of both
  directions' D_λ on the reference pair — the hardest true claim, since any looser true claim is
  refuted less often. A refutation is a replication where some bound exceeds the truth, so the
  rate is 1 − simultaneous coverage; it must stay ≤ α = 0.05.
* **power**: mechanisms with a false claim (a known bug's shape); the refutation rate on the
  default grid beside the rate on paper 000's orders λ = 2, 5, 7, same replications' keys.

Each cell prints the rate with its Wilson 95% interval. Results go to the JSON file.
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
from rdpjax.claims.orders import CLAIM_ORDERS, default_orders
from rdpjax.estimator.orders import DEFAULT_ORDERS
from rdpjax.studies import coverage, wilson_interval

ALPHA = 0.05
ANY_CURVE = claims.zcdp(1.0)  # any claim that is a curve (not a table) gets the same grid


def true_cells():
    """(label, mechanism): each audited against its exact curve."""
    return [
        ("Gaussian b=5", m.Gaussian(5.0)),
        ("Laplace b=5", m.Laplace(5.0)),
        ("Subsampled Gaussian b=5, q=0.5", m.PoissonSubsampled(m.Gaussian(5.0), 0.5)),
        ("Randomized response ε0=1.5", m.RandomizedResponse(1.5)),
        ("Sparse vector (Lyu, correct) ε=1", m.SparseVector(1.0, variant="lyu")),
        ("Noisy GD (paper 000)", m.NoisyGradientDescent(0.2, 1.0, 10)),
    ]


def false_cells():
    """(label, mechanism, false claim): a claim the mechanism does not meet."""
    return [
        ("Gaussian b=5 vs zCDP ρ=1/100 (σ² error)", m.Gaussian(5.0), claims.zcdp(1 / 100)),
        ("Laplace b=5 vs ε-DP ε=0.1 (sensitivity halved)", m.Laplace(5.0), claims.pure_dp(0.1)),
        (
            "Sparse vector (Lee-Clifton) vs ε-DP ε=1",
            m.SparseVector(1.0, variant="lee_clifton"),
            claims.pure_dp(1.0),
        ),
        (
            "Orthogonal series k=2, literal ties vs ε-DP ε=1",
            m.OrthogonalSeries(1.0, 2, ties="literal"),
            claims.pure_dp(1.0),
        ),
    ]


def _rate(hits: int, reps: int) -> dict:
    low, high = wilson_interval(hits, reps)
    return {"count": hits, "rate": hits / reps, "ci95": [low, high]}


def _lowers(mech, orders, n, reps, seed):
    x, xp = mech.reference_pair()
    res = coverage(
        jax.random.key(seed), mech, x, xp, list(orders), n=n, reps=reps, both_directions=True
    )
    return np.asarray(res.lower), np.asarray(res.exact)


def run(reps: int, sizes_true, sizes_false, seed: int) -> dict:
    rows = []
    for label, mech in true_cells():
        for n in sizes_true:
            t = time.perf_counter()
            orders = default_orders(ANY_CURVE, n)  # what audit(lam=None) bounds at this n
            lower, exact = _lowers(mech, orders, n, reps, seed)
            hits = int(np.any(lower > exact, axis=1).sum())
            per_order = (lower > exact).mean(axis=0)
            rows.append(
                {
                    "kind": "true (exact curve)",
                    "mechanism": label,
                    "n": n,
                    "grid": "default",
                    "orders": orders.tolist(),
                    "refuted": _rate(hits, reps),
                    "per_order_above_truth": per_order.tolist(),
                    "mean_lower_over_exact": (lower / exact).mean(axis=0).tolist(),
                    "seconds": round(time.perf_counter() - t, 1),
                }
            )
            _print(rows[-1])
    for label, mech, claim in false_cells():
        for n in sizes_false:
            grids = (("default", default_orders(claim, n)), ("2, 5, 7", DEFAULT_ORDERS))
            for name, orders in grids:
                t = time.perf_counter()
                lower, exact = _lowers(mech, orders, n, reps, seed)
                claimed = claim(list(orders))
                hits = int(np.any(lower > claimed, axis=1).sum())
                rows.append(
                    {
                        "kind": "false claim",
                        "mechanism": label,
                        "claim": claim.to_dict(),
                        "n": n,
                        "grid": name,
                        "refuted": _rate(hits, reps),
                        "truth_above_claim_at": [
                            float(v)
                            for v, e, c in zip(orders, exact, claimed, strict=True)
                            if e > c
                        ],
                        "seconds": round(time.perf_counter() - t, 1),
                    }
                )
                _print(rows[-1])
    return {
        "command": "python benchmarks/calibration/claim_orders.py",
        "reps": reps,
        "alpha": ALPHA,
        "claim_orders": list(CLAIM_ORDERS),
        "seed": seed,
        "jax": jax.__version__,
        "rows": rows,
    }


def _print(row: dict) -> None:
    r = row["refuted"]
    print(
        f"{row['kind']:<20} {row['mechanism']:<50} n={row['n']:<8.0e} {row['grid']:<13} "
        f"refuted {r['rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]  ({row['seconds']} s)",
        flush=True,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="n = 1e4 only, for a smoke run")
    parser.add_argument("--out", default="benchmarks/results/calibration/claim_orders.json")
    args = parser.parse_args(argv)
    if args.quick:
        sizes_true, sizes_false = [10**4], [10**4]
    else:
        sizes_true, sizes_false = [10**3, 3 * 10**3, 10**4, 10**5, 10**6], [3 * 10**3, 10**4, 10**5]
    result = run(args.reps, sizes_true, sizes_false, args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
