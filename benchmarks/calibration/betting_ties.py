"""The betting test's sets counted as they are bet on: a panel of laws, with ties and without.

The bets score each candidate set ``{v < t}`` or ``{|v − c| < t}`` on its past counts. Before
this change those counts were ranks in the pooled order (the x's among the first k values, x
before x' among equal values); where values tie at a split, t is the tied value and the set
holds none of them, so the plan scored a set on counts it never had (a constant output: it
bet on a set that never occurs and lost 10% of the wealth a pair). Now each set is counted
as it is bet on (``rdpjax.rejection.splits.below``). This script runs ``log_wealth_paths``
(R replications at once, α = 0.05, batches of 1,024) on a panel of laws; run it with each tree
on ``PYTHONPATH`` and the same seeds, then ``--compare`` the two JSON files:

* **validity** (true claims, R = 200, max_n = 20,000; refutations with a Clopper–Pearson 95%
  interval): the Gaussian sum (1-GDP) vs gdp(1); the same rounded to integers (post-processing:
  still 1-GDP); Laplace(1) vs pure_dp(1); the same clipped to [−0.5, 1.5] (atoms at both ends;
  post-processing); the Poisson-subsampled Laplace (q = 0.3) vs its exact ε; a Cauchy shift vs
  its exact ε (sup of the log density ratio, found on a fine grid and rounded up); a constant
  output on both sides vs gdp(0.5) (P = Q: the final log wealth is reported);
* **power** (claims shown false on the exact law, R = 100, max_n = 20,000): the refuted share
  and the median pairs to refutation, for the same laws against smaller ε or μ, and the
  two-sided geometric (integer codes, whose sets are unchanged: a control).

    PYTHONPATH=<tree> python benchmarks/calibration/betting_ties.py --out <file.json>
    python benchmarks/calibration/betting_ties.py --compare before.json after.json

Writes ``benchmarks/results/calibration/betting_ties.json`` with ``--compare``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import numpy as np
from scipy import stats

from rdpjax.claims import gdp, hockey_stick, pure_dp
from rdpjax.rejection import betting
from rdpjax.rejection.binomial import clopper_pearson

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
Q_SUB = 0.3
MAX_N = 20_000


def cauchy_epsilon() -> float:
    """sup_v log(f(v − 1)/f(v)) of the standard Cauchy density, rounded up at 1e-6."""
    v = np.linspace(-20, 20, 2_000_001)
    ratio = np.log1p(v**2) - np.log1p((v - 1.0) ** 2)
    return float(np.ceil(ratio.max() * 1e6) / 1e6)


def gauss(rng, shape):
    return 1.0 + rng.normal(size=shape), rng.normal(size=shape)


def rounded(rng, shape):
    x, y = gauss(rng, shape)
    return np.round(x) + 0.0, np.round(y) + 0.0  # + 0.0: no −0.0


def laplace(rng, shape):
    return 1.0 + rng.laplace(size=shape), rng.laplace(size=shape)


def clipped(rng, shape):
    x, y = laplace(rng, shape)
    return np.clip(x, -0.5, 1.5), np.clip(y, -0.5, 1.5)


def subsampled(rng, shape):
    return 1.0 * (rng.random(shape) < Q_SUB) + rng.laplace(size=shape), rng.laplace(size=shape)


def cauchy(rng, shape):
    return 1.0 + rng.standard_cauchy(shape), rng.standard_cauchy(shape)


def constant(rng, shape):
    return np.full(shape, 1.0), np.full(shape, 1.0)


def geometric(rng, shape):  # two-sided geometric, ε = 0.5, as integer codes
    p = 1.0 - np.exp(-0.5)
    noise = lambda: rng.geometric(p, shape) - rng.geometric(p, shape)  # noqa: E731
    return 41 + noise(), 40 + noise()


SUB_EPS = float(np.log1p(Q_SUB * (np.e - 1.0)))
VALIDITY = {
    "gaussian vs gdp(1)": (gauss, gdp(1.0)),
    "rounded gaussian vs gdp(1)": (rounded, gdp(1.0)),
    "laplace vs pure_dp(1)": (laplace, pure_dp(1.0)),
    "clipped laplace vs pure_dp(1)": (clipped, pure_dp(1.0)),
    "subsampled laplace vs its pure_dp": (subsampled, pure_dp(SUB_EPS)),
    "cauchy vs its pure_dp": (cauchy, pure_dp(cauchy_epsilon())),
    "constant (P = Q) vs gdp(0.5)": (constant, gdp(0.5)),
}
POWER = {
    "gaussian vs gdp(0.8)": (gauss, gdp(0.8)),
    "rounded gaussian vs gdp(0.6)": (rounded, gdp(0.6)),
    "laplace vs pure_dp(0.8)": (laplace, pure_dp(0.8)),
    "clipped laplace vs pure_dp(0.8)": (clipped, pure_dp(0.8)),
    "subsampled laplace vs pure_dp(0.8 of its)": (subsampled, pure_dp(0.8 * SUB_EPS)),
    "cauchy vs pure_dp(0.8 of its)": (cauchy, pure_dp(0.8 * cauchy_epsilon())),
    "geometric 0.5 vs pure_dp(0.4) (codes: control)": (geometric, pure_dp(0.4)),
}


def rounded_is_not_gdp(mu: float) -> bool:
    """Whether round(N(1, 1)) vs round(N(0, 1)) breaks mu-GDP: some ε where its exact
    hockey-stick divergence exceeds that of the μ-Gaussian (``rdpjax.claims.hockey_stick``)."""
    k = np.arange(-40, 42)
    p = stats.norm.cdf(k + 0.5, 1) - stats.norm.cdf(k - 0.5, 1)
    q = stats.norm.cdf(k + 0.5) - stats.norm.cdf(k - 0.5)
    for e in np.linspace(0.0, 5.0, 501):
        ours = np.sum(np.maximum(p - np.exp(e) * q, 0.0))
        if ours > float(hockey_stick(gdp(mu), e)) + 1e-12:
            return True
    return False


def run(draw, claim, reps: int, seed: int) -> dict:
    xs, ys = draw(np.random.default_rng(seed), (reps, MAX_N))
    begin = time.perf_counter()
    out = betting.log_wealth_paths(jax.random.key(seed), xs, ys, claim)
    seconds = time.perf_counter() - begin
    stop = out["stop"]
    refuted = stop > 0
    return {
        "reps": reps,
        "refuted": int(refuted.sum()),
        "median_stop": float(np.median(stop[refuted])) if refuted.any() else None,
        "mean_final_log_wealth": float(np.mean(out["log_wealth"])),
        "min_final_log_wealth": float(np.min(out["log_wealth"])),
        "seconds": seconds,
    }


def measure(reps: int, power_reps: int) -> dict:
    assert rounded_is_not_gdp(0.6), "the power claim on the rounded Gaussian must be false"
    res: dict = {"max_n": MAX_N, "validity": {}, "power": {}}
    for i, (name, (draw, claim)) in enumerate(VALIDITY.items()):
        res["validity"][name] = run(draw, claim, reps, 1000 + i)
        print(name, res["validity"][name], flush=True)
    for i, (name, (draw, claim)) in enumerate(POWER.items()):
        res["power"][name] = run(draw, claim, power_reps, 2000 + i)
        print(name, res["power"][name], flush=True)
    return res


def compare(before: dict, after: dict) -> dict:
    def ci(k, n):
        return [float(v) for v in clopper_pearson(k, n, 0.025)]  # 95%, two-sided

    rows = {"validity": {}, "power": {}}
    for part in rows:
        for name, b in before[part].items():
            a = after[part][name]
            rows[part][name] = {"before": b, "after": a}
            if part == "validity":
                rows[part][name]["after_ci"] = ci(a["refuted"], a["reps"])
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--power-reps", type=int, default=100)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--compare", nargs=2, type=Path, default=None)
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        res = compare(before, after)
        out = args.out or RESULTS / "betting_ties.json"
        res["command"] = "python benchmarks/calibration/betting_ties.py (each tree), --compare"
        out.write_text(json.dumps(res, indent=2) + "\n")
        for part, rows in res.items():
            if part == "command":
                continue
            for name, r in rows.items():
                b, a = r["before"], r["after"]
                print(f"{part:8s} {name:45s} refuted {b['refuted']:3d} → {a['refuted']:3d} of "
                      f"{a['reps']}; median stop {b['median_stop']} → {a['median_stop']}; mean "
                      f"log wealth {b['mean_final_log_wealth']:.3g} → "
                      f"{a['mean_final_log_wealth']:.3g}")  # fmt: skip
        print(f"wrote {out}")
        return
    res = measure(args.reps, args.power_reps)
    res["command"] = "python benchmarks/calibration/betting_ties.py"
    out = args.out or Path("betting_ties_run.json")
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
