"""The sequential set test by betting (issue 45): outputs until refuted, and false refutations.

    PYTHONPATH=. python benchmarks/calibration/sequential_sets.py [--reps 200] [--max-n 20000]

``rdpjax.rejection.betting.log_wealth_paths`` on R replications at once (the same test as
``betting_test``, on outputs drawn in advance with a fixed seed per case, and with
``jax.random.key(seed)`` for the within-batch permutations), α = 0.05:

* **power**: the pairs per side drawn until the claim is refuted — median, quartiles (a
  replication not refuted by ``max_n`` counts as more than ``max_n``) and the share not refuted
  by ``max_n``: the cases of Kutta, Dunsche, Wei, Zikas (arXiv:2602.06518; output = a sum of 10
  records + N(0, 1) or Laplace(1) noise, neighbours differing by 1 in the sum, so the Gaussian
  case is exactly 1-GDP) against gdp(0.5) and gdp(0.8), and González et al.'s NonDPGaussian1
  (P = N(0, (2/ε)²), Q = N(0.5, (1/ε)²)) against ε-DP at ε = 0.01 and 0.1;
* **validity**: the share of replications that refute a true claim within ``max_n`` (Clopper–
  Pearson 95% interval): the Gaussian sum against gdp(1.0) (its exact guarantee) and against
  (ε, δ)-DP at ε = 4.38 (δ(4.38) ≤ 1e-5) and ε = 1 with δ = δ_1(1) exactly, the Laplace
  mechanism of scale 1/ε (sensitivity 1) against ε-DP at ε = 1, and binary randomized response
  (integer codes) against its ε = 1.

Writes ``benchmarks/results/calibration/sequential_sets.json``; prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import numpy as np
from scipy import stats

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402

from rdpjax.claims import approx_dp, gdp, hockey_stick, pure_dp  # noqa: E402
from rdpjax.rejection.betting import SCALES, log_wealth_paths  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
ALPHA = 0.05
SUM = 10.0  # the sum of the 10 records on x; x' differs by 1


def _gauss(rng, shape):
    return SUM + rng.normal(size=shape), SUM - 1.0 + rng.normal(size=shape)


def _laplace(rng, shape):
    return SUM + rng.laplace(size=shape), SUM - 1.0 + rng.laplace(size=shape)


def _nondp(eps):
    def draw(rng, shape):
        return rng.normal(0.0, 2.0 / eps, shape), rng.normal(0.5, 1.0 / eps, shape)

    return draw


def _laplace_mech(eps):
    def draw(rng, shape):
        return 1.0 + rng.laplace(0.0, 1.0 / eps, shape), rng.laplace(0.0, 1.0 / eps, shape)

    return draw


def _rr(eps):
    keep = np.exp(eps) / (1.0 + np.exp(eps))

    def draw(rng, shape):
        x = (rng.random(shape) < keep).astype(np.int64)  # true bit 1, kept with e^ε/(1+e^ε)
        y = (rng.random(shape) >= keep).astype(np.int64)  # true bit 0
        return x, y

    return draw


def cases():
    """(name, draw, claim, target median or None, kind) of the study."""
    delta_1 = float(hockey_stick(gdp(1.0), 1.0))
    assert float(hockey_stick(gdp(1.0), 4.38)) <= 1e-5
    return [
        ("Gaussian sum (1-GDP) vs gdp(0.5)", _gauss, gdp(0.5), 160, "power"),
        ("Gaussian sum (1-GDP) vs gdp(0.8)", _gauss, gdp(0.8), 1390, "power"),
        ("Laplace b=1 sum vs gdp(0.5)", _laplace, gdp(0.5), 190, "power"),
        ("NonDPGaussian1 ε=0.01 vs ε-DP", _nondp(0.01), pure_dp(0.01), 60, "power"),
        ("NonDPGaussian1 ε=0.1 vs ε-DP", _nondp(0.1), pure_dp(0.1), 60, "power"),
        ("Gaussian sum vs gdp(1.0) (true)", _gauss, gdp(1.0), None, "validity"),
        ("Gaussian sum vs (4.38, 1e-5)-DP (true)", _gauss, approx_dp(4.38, 1e-5), None, "validity"),
        (
            f"Gaussian sum vs (1, {delta_1:.4f})-DP (true, tight)",
            _gauss,
            approx_dp(1.0, delta_1),
            None,
            "validity",
        ),
        (
            "Laplace 1/ε, ε=1 vs ε-DP (true, tight)",
            _laplace_mech(1.0),
            pure_dp(1.0),
            None,
            "validity",
        ),
        ("randomized response ε=1 vs ε-DP (true, tight)", _rr(1.0), pure_dp(1.0), None, "validity"),
    ]


def run_case(name, draw, claim, target, kind, reps, max_n, seed) -> dict:
    rng = np.random.default_rng(seed)
    xs, ys = draw(rng, (reps, max_n))
    t0 = time.perf_counter()
    out = log_wealth_paths(jax.random.key(seed), xs, ys, claim, alpha=ALPHA)
    seconds = time.perf_counter() - t0
    stop = out["stop"]
    refuted = stop > 0
    k = int(refuted.sum())
    ci = stats.binomtest(k, reps).proportion_ci(method="exact")  # Clopper–Pearson
    n = np.where(refuted, stop, max_n + 1)  # not refuted: more than max_n
    q1, med, q3 = (float(v) if v <= max_n else np.inf for v in np.percentile(n, [25, 50, 75]))
    return {
        "case": name,
        "kind": kind,
        "claim": claim.to_dict(),
        "reps": reps,
        "max_n": max_n,
        "seed": seed,
        "refuted": k,
        "rate": k / reps,
        "rate_ci": [float(ci.low), float(ci.high)],
        "not_refuted_rate": 1 - k / reps,
        "median": med if np.isfinite(med) else None,
        "quartiles": [q if np.isfinite(q) else None for q in (q1, q3)],
        "target_median": target,
        "winner_counts": np.bincount(out["winner"][refuted], minlength=len(SCALES)).tolist(),
        "seconds": seconds,
    }


def _fmt(v):
    return "> max_n" if v is None else f"{v:,.0f}"


def table(rows) -> str:
    lines = [
        "| case | kind | R | refuted (rate, Clopper–Pearson 95%) | median (IQR) pairs per side "
        "| not refuted by max_n | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lo, hi = r["rate_ci"]
        target = f"median ≤ {r['target_median']:,}" if r["target_median"] else "rate ≤ 0.05"
        lines.append(
            f"| {r['case']} | {r['kind']} | {r['reps']} | {r['refuted']} ({r['rate']:.3f}, "
            f"{lo:.3f}–{hi:.3f}) | {_fmt(r['median'])} ({_fmt(r['quartiles'][0])}–"
            f"{_fmt(r['quartiles'][1])}) | {r['not_refuted_rate']:.3f} | {target} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--max-n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["power", "validity"], default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "sequential_sets.json")
    args = parser.parse_args(argv)
    command = (
        f"PYTHONPATH=. python benchmarks/calibration/sequential_sets.py --reps {args.reps} "
        f"--max-n {args.max_n} --seed {args.seed}"
        + (f" --only {args.only}" if args.only else "")
        + (f" --out {args.out}" if args.out != RESULTS / "sequential_sets.json" else "")
    )
    print(command)
    rows = []
    for i, (name, draw, claim, target, kind) in enumerate(cases()):
        if args.only and kind != args.only:
            continue
        rows.append(
            run_case(name, draw, claim, target, kind, args.reps, args.max_n, args.seed * 1000 + i)
        )
        print(
            f"{name}: {rows[-1]['refuted']}/{args.reps} refuted, median "
            f"{_fmt(rows[-1]['median'])} ({rows[-1]['seconds']:.1f} s)",
            flush=True,
        )
    print(table(rows))
    meta = {"command": command, "alpha": ALPHA, "scales": list(SCALES)}
    write_json(args.out, meta, cases=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
