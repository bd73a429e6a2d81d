"""The set test on true claims at the DP-SGD many-run's sizes (1,000 scores a side).

    PYTHONPATH=. python benchmarks/calibration/set_test_null.py [--reps 2000]

(``PYTHONPATH=.``: the checkout's rdpjax.) ``benchmarks/calibration/canaries_dpsgd.py`` audits
one canary with :func:`rdpjax.rejection.set_test` on 1,000 scores with it and 1,000 without.
Commit abe4216 (pooled guesses tested in nested chains, calibrated exactly) raised that audit's
ε; this checks, on laws where the claim is true, how often the test refutes it (at most α =
0.05 allowed) and, in the many-run's own configuration (a ``gdp(0.925)`` claim, δ = 10⁻⁵), how
often the reported ε(δ) exceeds the truth. ``--reps`` replications a cell, the data from
``default_rng([7 or 11, r])`` and the key ``key(10_000 + r)`` or ``key(20_000 + r)``; exact
(Clopper–Pearson) 95% intervals. Writes ``benchmarks/results/calibration/set_test_null.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibrate import clopper_pearson  # noqa: E402

from rdpjax.claims import approx_dp, gdp, pure_dp
from rdpjax.rejection import set_test

N = 1_000
DELTA = 1e-5
Q = np.e / (1 + np.e)  # randomized response at ε = 1: the right answer's probability


def _rr(r: np.random.Generator):
    return (r.random(N) < Q).astype(np.int64), (r.random(N) < 1 - Q).astype(np.int64)


REFUTE = {  # name: (draw, a true claim, delta or None)
    "gauss_equal_pure0": (lambda r: (r.normal(size=N), r.normal(size=N)), pure_dp(0.0), None),
    "gauss_equal_approx0": (
        lambda r: (r.normal(size=N), r.normal(size=N)),
        approx_dp(0.0, DELTA),
        None,
    ),
    "poisson3_equal_pure0": (lambda r: (r.poisson(3, N), r.poisson(3, N)), pure_dp(0.0), None),
    "cauchy_equal_pure0": (
        lambda r: (r.standard_cauchy(N), r.standard_cauchy(N)),
        pure_dp(0.0),
        None,
    ),
    "rr1_pure1": (_rr, pure_dp(1.0), None),
    "laplace1_pure1": (
        lambda r: (r.laplace(1.0, 1.0, N), r.laplace(0.0, 1.0, N)),
        pure_dp(1.0),
        None,
    ),
    "gauss0.925_gdp": (lambda r: (r.normal(0.925, 1.0, N), r.normal(size=N)), gdp(0.925), DELTA),
}

EPSILON = {  # name: (draw, the true ε(δ)); the claim is the many-run's gdp(0.925)
    "gauss_equal": (lambda r: (r.normal(size=N), r.normal(size=N)), 0.0),
    "poisson3_equal": (lambda r: (r.poisson(3, N), r.poisson(3, N)), 0.0),
    "rr1": (_rr, float(np.log((Q - DELTA) / (1 - Q)))),
}


def _cp(k: int, reps: int) -> list[float]:
    return list(clopper_pearson(k, reps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument(
        "--out", default="benchmarks/results/calibration/set_test_null.json", type=Path
    )
    args = parser.parse_args()
    out: dict = {"reps": args.reps, "n": N, "alpha": 0.05, "refuted": {}, "epsilon_above": {}}
    for name, (draw, claim, delta) in REFUTE.items():
        t0, k = time.perf_counter(), 0
        for r in range(args.reps):
            p, q = draw(np.random.default_rng([7, r]))
            extra = {} if delta is None else {"delta": delta}
            k += bool(set_test(jax.random.key(10_000 + r), p, q, claim, **extra).refuted)
        out["refuted"][name] = {"count": k, "interval": _cp(k, args.reps)}
        print(f"{name:22s} true claim refuted {k}/{args.reps} {_cp(k, args.reps)} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    for name, (draw, truth) in EPSILON.items():
        t0, k = time.perf_counter(), 0
        for r in range(args.reps):
            p, q = draw(np.random.default_rng([11, r]))
            result = set_test(jax.random.key(20_000 + r), p, q, gdp(0.925), delta=DELTA)
            k += bool(result.epsilon > truth)
        out["epsilon_above"][name] = {
            "truth": truth,
            "count": k,
            "interval": _cp(k, args.reps),
        }
        seconds = time.perf_counter() - t0
        print(f"{name:22s} ε(δ) above the truth {truth:.5f}: {k}/{args.reps} "
              f"{_cp(k, args.reps)} ({seconds:.0f} s)", flush=True)  # fmt: skip
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
