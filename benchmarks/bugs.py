"""Known shapes of DP bugs, each with its correct twin: the claim, the exact ε(λ), and the n at
which ``rdpjax.audit`` refutes the claim.

    python benchmarks/bugs.py [--sizes 1e2 1e3 1e4 1e5] [--seed 0] [--out FILE]

Each case is a JAX sampler on adjacent databases x, x' (``rdpjax.mechanisms.from_sampler``) with
the claim its author would make (``rdpjax.claims``). For the buggy variant and its correct twin the
audit runs at each n (outputs per database, the claim's wide order grid, both directions,
α = 0.05); the table gives the smallest n that refutes the claim, and whether the twin was refuted
at any n (it should not be, but for the α the audit allows). Shapes, after the bugs reported in
public libraries and audit papers (issue 24):

* ``gaussian_sigma``: the analytic σ off by a square root (σ/√2 used, σ claimed): actual
  ``λΔ²/σ²`` against the claimed ``λΔ²/(2σ²)``;
* ``double_spending``: two releases of the same query charged as one: actual ε(λ) twice the claim;
* ``zero_sensitivity``: the sensitivity computed from the lower bound twice (B − B = 0 instead of
  B − 0), so no noise at all: disjoint outputs, ε(λ) = ∞;
* ``clip_after_sum``: the sum clipped after summing, so one unclipped record moves it by 8 while
  sensitivity 1 is claimed: actual ε(λ) 64 times the claim;
* ``noise_on_sum_scaled_for_mean``: DP-SGD-style, noise whose scale was computed for the mean
  (σC/B) added to the sum (B = 10): actual ε(λ) B² = 100 times the claim.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from _summary import write_json

import rdpjax
from rdpjax.claims import pure_dp, zcdp

RESULTS = Path(__file__).resolve().parent / "results"
SIGMA = 2.0  # noise of the Gaussian cases (sensitivity 1): claimed ρ = 1/(2σ²) = 0.125


def _sum(database):
    return jnp.sum(database)


CASES = {
    # name: (buggy sampler, correct sampler, claim, exact ε(λ) of the buggy one as a function)
    "gaussian_sigma": (
        lambda k, db, n: _sum(db) + SIGMA / jnp.sqrt(2.0) * jax.random.normal(k, (n,)),
        lambda k, db, n: _sum(db) + SIGMA * jax.random.normal(k, (n,)),
        zcdp(1 / (2 * SIGMA**2)),
        lambda lam: lam / SIGMA**2,
    ),
    "double_spending": (
        lambda k, db, n: _sum(db) + SIGMA * jax.random.normal(k, (n, 2)),
        lambda k, db, n: _sum(db) + SIGMA * jax.random.normal(k, (n,)),
        zcdp(1 / (2 * SIGMA**2)),
        lambda lam: 2 * lam / (2 * SIGMA**2),
    ),
    "zero_sensitivity": (
        lambda k, db, n: jnp.full((n,), _sum(db)) + 0.0 * jax.random.normal(k, (n,)),
        lambda k, db, n: _sum(db) + jax.random.laplace(k, (n,)),  # scale 1/ε with B = 1
        pure_dp(1.0),
        lambda lam: np.inf,
    ),
    "clip_after_sum": (
        lambda k, db, n: jnp.clip(_sum(db), 0.0, 100.0) + SIGMA * jax.random.normal(k, (n,)),
        lambda k, db, n: _sum(jnp.clip(db, 0.0, 1.0)) + SIGMA * jax.random.normal(k, (n,)),
        zcdp(1 / (2 * SIGMA**2)),
        lambda lam: lam * 64 / (2 * SIGMA**2),
    ),
    "noise_on_sum_scaled_for_mean": (
        lambda k, db, n: _sum(db) + SIGMA / 10 * jax.random.normal(k, (n,)),
        lambda k, db, n: _sum(db) + SIGMA * jax.random.normal(k, (n,)),
        zcdp(1 / (2 * SIGMA**2)),
        lambda lam: 100 * lam / (2 * SIGMA**2),
    ),
}

# The adjacent pair: x' drops one record's value; the clip-after-sum case's record is 8 (its data
# were never clipped), every other case's is 1.
PAIRS = {
    "clip_after_sum": (jnp.array([8.0, 0.5, 0.5]), jnp.array([0.0, 0.5, 0.5])),
}
DEFAULT_PAIR = (jnp.array([1.0, 0.5, 0.5]), jnp.array([0.0, 0.5, 0.5]))


def first_refutation(sampler, claim, x, x_prime, sizes, key, discrete=False):
    mech = rdpjax.mechanisms.from_sampler(sampler, claim=claim)
    for n in sizes:
        options = {"discrete": True} if discrete else {}
        report = rdpjax.audit(mech, x, x_prime, n=n, key=key, progress=False, **options)
        if report.is_refuted:
            return n, report
    return None, report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e2, 1e3, 1e4, 1e5])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "bugs.json")
    args = parser.parse_args(argv)
    rdpjax.enable_compilation_cache()
    sizes = [int(v) for v in args.sizes]
    rows = []
    for i, (name, (buggy, correct, claim, exact)) in enumerate(CASES.items()):
        x, x_prime = PAIRS.get(name, DEFAULT_PAIR)
        key = jax.random.key(args.seed * 1000 + i)
        discrete = name == "zero_sensitivity"  # point masses: relative frequencies
        n_bug, report = first_refutation(buggy, claim, x, x_prime, sizes, key, discrete)
        n_twin, _ = first_refutation(correct, claim, x, x_prime, sizes, key)
        worst = int(np.argmax(np.asarray(report.lower) - np.asarray(report.claimed)))
        lam = float(report.lam[worst])
        rows.append(
            {
                "case": name,
                "claim": str(claim),
                "exact_at_lam": float(exact(lam)),
                "lam": lam,
                "refuted_at_n": n_bug,
                "lower_at_lam": float(report.lower[worst]),
                "claimed_at_lam": float(report.claimed[worst]),
                "twin_refuted_at_n": n_twin,
            }
        )
        r = rows[-1]
        print(
            f"{name:30s} claim {r['claim']:24s} refuted at n = {n_bug or '—'!s:>7}  "
            f"(λ = {lam:g}: lower {r['lower_at_lam']:.3f}, claimed {r['claimed_at_lam']:.3f}, "
            f"exact {r['exact_at_lam']:.3f})  twin refuted: {n_twin or 'never'}",
            flush=True,
        )
    meta = {
        "command": f"python benchmarks/bugs.py --sizes {' '.join(map(str, sizes))} "
        f"--seed {args.seed}",
    }
    write_json(args.out, meta, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
