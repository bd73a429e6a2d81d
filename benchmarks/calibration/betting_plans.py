"""The betting test's plans past 8,192 pairs (issue 52): at every batch, or as the past grows.

Before issue 52 the bets were planned at the start of every batch (at most ``batch`` = 1024
pairs): O(n² / batch) work, 5.6 s at ``max_n = 10⁵``. Now they are planned when the pairs seen
have grown by 1/8 since the last plan (``rdpjax.rejection.betting.plans_at``), as
``rdpjax.audit`` (batches up to 10⁶) always did. Below 8,192 pairs the two rules are the same
plans. Both rules run here on the same outputs (``log_wealth_paths``, R replications at once;
the old rule by patching ``plans_at`` in this process), α = 0.05:

* **validity**: tight true claims, refutations within ``max_n`` (Clopper–Pearson 95%) — the
  Gaussian sum (1-GDP) vs gdp(1.0), Laplace(1) vs pure_dp(1), two-sided geometric ε = 0.5 (as
  codes) vs pure_dp(0.5), and the Poisson-subsampled Laplace (q = 0.3) vs its exact pure ε;
* **power**: pairs to refutation where it takes more than 8,192: the Gaussian sum vs gdp(0.95),
  Laplace(1) vs pure_dp(0.9), geometric ε = 0.5 vs pure_dp(0.45) (median, quartiles, share not
  refuted by ``max_n``).

    PYTHONPATH=. python benchmarks/calibration/betting_plans.py --reps 200 --power-reps 30

Writes ``benchmarks/results/calibration/betting_plans.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import numpy as np
from scipy import stats

from rdpjax.claims import gdp, pure_dp
from rdpjax.rejection import betting

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
Q_SUB = 0.3


def gauss(rng, shape):
    return 1.0 + rng.normal(size=shape), rng.normal(size=shape)


def laplace(rng, shape):
    return 1.0 + rng.laplace(size=shape), rng.laplace(size=shape)


def geometric(rng, shape):  # two-sided geometric, ε = 0.5: X − Y ~ difference of geometrics
    p = 1.0 - np.exp(-0.5)
    noise = lambda: rng.geometric(p, shape) - rng.geometric(p, shape)  # noqa: E731
    return 41 + noise(), 40 + noise()


def subsampled(rng, shape):
    return 1.0 * (rng.random(shape) < Q_SUB) + rng.laplace(size=shape), rng.laplace(size=shape)


VALIDITY = {
    "gaussian vs gdp(1)": (gauss, gdp(1.0)),
    "laplace vs pure_dp(1)": (laplace, pure_dp(1.0)),
    "geometric 0.5 vs pure_dp(0.5)": (geometric, pure_dp(0.5)),
    "subsampled laplace vs its pure_dp": (
        subsampled,
        pure_dp(float(np.log1p(Q_SUB * (np.e - 1.0)))),
    ),
}
POWER = {
    "gaussian vs gdp(0.95)": (gauss, gdp(0.95)),
    "laplace vs pure_dp(0.9)": (laplace, pure_dp(0.9)),
    "geometric 0.5 vs pure_dp(0.45)": (geometric, pure_dp(0.45)),
}


def run(rule: str, draw, claim, reps: int, max_n: int, seed: int) -> dict:
    """``log_wealth_paths`` under ``rule`` ("new" or "old") on the draws of ``seed``."""
    xs, ys = draw(np.random.default_rng(seed), (reps, max_n))
    saved = betting.plans_at
    if rule == "old":  # every batch on every past pair
        betting.plans_at = lambda ends: {s for s in [0, *ends[:-1]] if s >= betting.FIRST}
    try:
        start = time.perf_counter()
        out = betting.log_wealth_paths(jax.random.key(seed), xs, ys, claim)
        seconds = time.perf_counter() - start
    finally:
        betting.plans_at = saved
    stop = out["stop"]
    refuted = int(np.sum(stop > 0))
    ci = stats.binomtest(refuted, reps).proportion_ci(0.95, method="exact")
    big = np.where(stop > 0, stop, max_n + 1)
    q1, med, q3 = (float(v) for v in np.quantile(big, [0.25, 0.5, 0.75]))
    return {
        "rule": rule, "refuted": refuted, "reps": reps, "ci95": [ci.low, ci.high],
        "median": med, "q1": q1, "q3": q3, "not_refuted_share": 1 - refuted / reps,
        "seconds": seconds,
    }  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--power-reps", type=int, default=30)
    parser.add_argument("--max-n", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--out", type=Path, default=RESULTS / "betting_plans.json")
    args = parser.parse_args(argv)
    rows = []
    for i, (name, (draw, claim)) in enumerate(VALIDITY.items()):
        row = {"case": name, "part": "validity", **run("new", draw, claim, args.reps, args.max_n,
                                                      args.seed + i)}  # fmt: skip
        rows.append(row)
        print(f"validity {name:36s} new: {row['refuted']}/{row['reps']} "
              f"[{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}]  ({row['seconds']:.0f} s)",
              flush=True)  # fmt: skip
    for i, (name, (draw, claim)) in enumerate(POWER.items()):
        for rule in ("new", "old"):
            seed = args.seed + 100 + i
            row = {"case": name, "part": "power",
                   **run(rule, draw, claim, args.power_reps, args.max_n, seed)}  # fmt: skip
            rows.append(row)
            print(f"power    {name:36s} {rule}: median {row['median']:,.0f} "
                  f"[{row['q1']:,.0f}, {row['q3']:,.0f}], not refuted "
                  f"{row['not_refuted_share']:.2f}  ({row['seconds']:.0f} s)",
                  flush=True)  # fmt: skip
    command = (
        f"PYTHONPATH=. python benchmarks/calibration/betting_plans.py --reps {args.reps} "
        f"--power-reps {args.power_reps} --max-n {args.max_n}"
    )
    args.out.write_text(
        json.dumps({"command": command, "max_n": args.max_n, "rows": rows}, indent=1)
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
