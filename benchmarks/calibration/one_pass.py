"""Validity of a streamed audit's one pass (issue 52): both statistics on the same draws.

A streamed audit (``memory_budget=0``) of a tight, true claim counts its Rényi bounds and its
rejection sets on one pass of draws (``rdpjax/auditing/one_pass.py``). Each law's sampler returns
its batch *sorted* (or ``np.repeat``-expanded, for the discrete laws), the order issue 51 showed
can break a test that looks at positions. Panel: continuous (Gaussian), flat likelihood ratio
(Laplace, geometric), discrete categorical (8-ary randomized response), a subsampled mixture
(Poisson-subsampled Laplace, q = 0.3) and a heavy tail (Laplace noise read through an arcsinh,
the same pure-DP claim: a fixed injective map changes no divergence). False refutations are
reported with a Clopper-Pearson 95% interval, and the mean outputs drawn per side over n.

    PYTHONPATH=. python benchmarks/calibration/one_pass.py --reps 200 --n 20000

Writes ``benchmarks/results/calibration/one_pass.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import numpy as np
from scipy import stats

import rdpjax
from rdpjax.claims import gdp, pure_dp

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"


def gaussian(rng, db, m):
    return np.sort(db + rng.normal(0.0, 1.0, m))


def laplace(rng, db, m):
    return np.sort(db + rng.laplace(0.0, 1.0, m))


def heavy(rng, db, m):  # exp-tailed noise read through sinh: tails like |x|^(-1) log terms
    return np.sort(np.sinh(db + rng.laplace(0.0, 1.0, m)))


def geometric(rng, db, m):  # two-sided geometric, ε = 0.5, as np.repeat of multinomial counts
    e = 0.5  # values 40 + db + noise, noise in [-40, 40]: codes ≥ 0, as a stream needs
    values = np.arange(0, 82)
    prob = np.exp(-e * np.abs(values - 40 - db))
    return np.repeat(values, rng.multinomial(m, prob / prob.sum()))


def rr8(rng, db, m):  # 8-ary randomized response, ε = 1: the true value with e/(e + 7)
    k, e = 8, 1.0
    prob = np.full(k, 1.0 / (np.exp(e) + k - 1))
    prob[int(db)] = np.exp(e) / (np.exp(e) + k - 1)
    return np.repeat(np.arange(k), rng.multinomial(m, prob))


Q_SUB = 0.3


def subsampled(rng, db, m):  # x: with probability q the record is in (+1), x': never
    shift = db * (rng.random(m) < Q_SUB)
    return np.sort(shift + rng.laplace(0.0, 1.0, m))


LAWS = {
    "gaussian mu=1 vs gdp(1)": (gaussian, gdp(1.0)),
    "laplace b=1 vs pure_dp(1)": (laplace, pure_dp(1.0)),
    "sinh(laplace) vs pure_dp(1)": (heavy, pure_dp(1.0)),
    "geometric eps=0.5 vs pure_dp(0.5)": (geometric, pure_dp(0.5)),
    "8-ary RR eps=1 vs pure_dp(1)": (rr8, pure_dp(1.0)),
    "subsampled laplace q=0.3 vs its pure_dp": (
        subsampled,
        pure_dp(float(np.log1p(Q_SUB * (np.e - 1.0)))),
    ),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--out", type=Path, default=RESULTS / "one_pass.json")
    args = parser.parse_args(argv)
    rows = []
    for name, (sample, claim) in LAWS.items():
        start, refuted, drawn = time.perf_counter(), 0, []
        for r in range(args.reps):
            key = jax.random.key(args.seed * 100_003 + r)
            rep = rdpjax.audit(
                key, sample, 1, 0, n=args.n, claim=claim, memory_budget=0, progress=False
            )
            assert rep.streamed and not rep.sizes()["sets_own"]
            refuted += bool(rep.is_refuted)
            drawn.append(rep.sizes()["drawn"] / args.n)
        ci = stats.binomtest(refuted, args.reps).proportion_ci(0.95, method="exact")
        row = {
            "law": name, "claim": str(claim), "reps": args.reps, "false_refutations": refuted,
            "rate": refuted / args.reps, "ci95": [ci.low, ci.high],
            "drawn_over_n_mean": float(np.mean(drawn)), "drawn_over_n_max": float(np.max(drawn)),
            "seconds": time.perf_counter() - start,
        }  # fmt: skip
        rows.append(row)
        print(
            f"{name:42s} {refuted:3d}/{args.reps} = {row['rate']:.3f} [{ci.low:.3f}, "
            f"{ci.high:.3f}]  drawn/n mean {row['drawn_over_n_mean']:.3f} max "
            f"{row['drawn_over_n_max']:.3f}  ({row['seconds']:.0f} s)",
            flush=True,
        )
    command = (
        f"PYTHONPATH=. python benchmarks/calibration/one_pass.py --reps {args.reps} --n {args.n}"
    )
    out = {"command": command, "n": args.n, "seed": args.seed, "rows": rows}
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
