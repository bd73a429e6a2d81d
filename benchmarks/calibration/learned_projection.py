"""Learned projections against the oracle projection, on vector Gaussian mechanisms and a leak in
the noise scale.

    python benchmarks/calibration/learned_projection.py [--reps 100] [--dims 10 100 1000]
        [--out FILE]
    python benchmarks/calibration/learned_projection.py --split --reps 20     # the training share

Mean cells: the zoo's ``Gaussian`` on databases of rows in [0, 1]^d whose sums differ by a random
direction, its scale set so that the exact D_2 = 0.25; n = 10⁵ outputs a side *in total*. Each
replication runs ``rdpjax.audit(..., lam=2, project="learn")`` (a first fifth of the n trains, grown
by ``rdpjax.auditing.learn.training_size`` up to 3/5 where the direction is still noisy; the rest
certifies) and, on the same key, the audit with the oracle projection ``v ↦ v·Δ`` (all n certify).
Reported: the coverage of the learned bound (lower ≤ exact), the mean learned and oracle bounds and
their ratio, the families chosen and the training outputs a side (min, mean, max).

Scale cell: N(0, 1.3² I_10) against N(0, I_10), exact D_2 = 3.232 (no mean leak); the score
learned from all families against one learned from the linear families only, on the same draws
(2·10⁴ train, 8·10⁴ certify a side).

Correlation cell (issue 47): N(0, I_5) against N(0, Σ), Σ the identity but for a correlation
ρ = 0.4 between coordinates 0 and 1: equal means and marginals, the leak only in the dependence.
Exact ε(2) = max(D_2(P‖Q), D_2(Q‖P)) = 0.3365 (the closed form of Gil, Alajaji, Linder 2013,
``D_λ = −[log det Σ_λ − (1−λ) log det Σ_p − λ log det Σ_q] / (2(λ−1))``, ``Σ_λ = λΣ_q + (1−λ)Σ_p``).
Each replication audits a numpy black box with ``project="learn"`` (n = 10⁵ a side in total) and,
on the same key, with the fixed projection ``v ↦ v_0·v_1``. ``--cells`` picks the cells
(``mean scale correlation``; default all).

``--split``: the learned/oracle ratio at d = 100 for first training shares 0.1, 0.2, 0.3, 0.5
(``--fixed-share``: with ``training_size``'s growth turned off, as the shares were first measured).
Writes ``benchmarks/results/calibration/learned_projection.json`` (``--split``: ``…_split.json``).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402
from scipy import stats  # noqa: E402

import rdpjax  # noqa: E402
import rdpjax.auditing.learn  # noqa: E402
from rdpjax.auditing import Training  # noqa: E402
from rdpjax.auditing.learn import learn_projection  # noqa: E402
from rdpjax.mechanisms import Gaussian  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
N = 10**5


def gaussian_pair(d: int, seed: int):
    rng = np.random.default_rng([seed, d])
    u = rng.standard_normal(d)
    x = np.full((3, d), 0.5)
    x_prime = x.copy()
    x_prime[0] = 0.5 + 0.5 * u / np.abs(u).max()
    diff = x.sum(0) - x_prime.sum(0)
    return Gaussian(float(2.0 * np.linalg.norm(diff))), x, x_prime, diff  # D_2 = 0.25


def mean_cell(d: int, reps: int, seed: int, training: Training | None = None) -> dict:
    mech, x, x_prime, diff = gaussian_pair(d, seed)
    learned, oracle, families, n_train = [], [], collections.Counter(), []
    start = time.perf_counter()
    for r in range(reps):
        key = jax.random.key(seed * 100_003 + r)
        rep = rdpjax.audit(
            key, mech, x, x_prime, 2.0, n=N, project="learn", progress=False,
            training=training,
        )  # fmt: skip
        learned.append(float(rep.lower[0]))
        projection = json.loads(rep.settings)["projection"]
        families[projection["family"]] += 1
        n_train.append(projection["n_train"])
        direct = rdpjax.audit(
            key, mech, x, x_prime, 2.0, n=N, project=lambda v: v @ diff, progress=False
        )
        oracle.append(float(direct.lower[0]))
    learned, oracle = np.array(learned), np.array(oracle)
    held = int(np.sum(learned <= 0.25))
    ci = stats.binomtest(held, reps).proportion_ci(method="wilson")
    return {
        "d": d,
        "reps": reps,
        "exact": 0.25,
        "coverage": held / reps,
        "coverage_ci": [float(ci.low), float(ci.high)],
        "oracle_coverage": float(np.mean(oracle <= 0.25)),
        "mean_learned": float(learned.mean()),
        "mean_oracle": float(oracle.mean()),
        "learned_over_oracle": float(learned.mean() / oracle.mean()),
        "families": dict(families),
        "n_train": [int(np.min(n_train)), float(np.mean(n_train)), int(np.max(n_train))],
        "seconds": time.perf_counter() - start,
    }


def scale_cell(reps: int, seed: int, d: int = 10, ratio: float = 1.3) -> dict:
    s_lam = 2 + (1 - 2) * ratio**2
    exact = d * (np.log(1 / ratio) + np.log(1 / s_lam) / 2)  # D_2, Gil, Alajaji, Linder 2013
    rng = np.random.default_rng([seed, 7])
    out = {"all": [], "linear": []}
    chosen = collections.Counter()
    start = time.perf_counter()
    for _ in range(reps):
        train_p, train_q = (
            ratio * rng.standard_normal((N // 5, d)),
            rng.standard_normal((N // 5, d)),
        )
        cert_p, cert_q = (
            ratio * rng.standard_normal((N - N // 5, d)),
            rng.standard_normal((N - N // 5, d)),
        )
        linear = ("fisher", "logistic")
        for name, families in (("all", rdpjax.auditing.learn.FAMILIES), ("linear", linear)):
            lp = learn_projection(train_p, train_q, families=families)
            if name == "all":
                chosen[lp.family] += 1
            bound = rdpjax.lower_bound(
                lp(cert_p), lp(cert_q), 2.0, both_directions=True, transform="quantile"
            )
            out[name].append(float(bound.lower[0]))
    return {
        "d": d,
        "ratio": ratio,
        "reps": reps,
        "exact": float(exact),
        "coverage_all": float(np.mean(np.array(out["all"]) <= exact)),
        "mean_all_over_exact": float(np.mean(out["all"]) / exact),
        "mean_linear_over_exact": float(np.mean(out["linear"]) / exact),
        "families": dict(chosen),
        "seconds": time.perf_counter() - start,
    }


CORRELATION = 0.4


def gaussian_divergence(lam: float, cov_p: np.ndarray, cov_q: np.ndarray) -> float:
    """D_λ(N(0, Σ_p) ‖ N(0, Σ_q)) in closed form (Gil, Alajaji, Linder 2013); Σ_λ must be PD."""
    cov_lam = lam * cov_q + (1 - lam) * cov_p
    logdet = [np.linalg.slogdet(c)[1] for c in (cov_lam, cov_p, cov_q)]
    return float(-(logdet[0] - (1 - lam) * logdet[1] - lam * logdet[2]) / (2 * (lam - 1)))


def correlation_cell(reps: int, seed: int, d: int = 5, rho: float = CORRELATION) -> dict:
    cov = np.eye(d)
    cov[0, 1] = cov[1, 0] = rho
    exact = max(gaussian_divergence(2.0, np.eye(d), cov), gaussian_divergence(2.0, cov, np.eye(d)))
    chol = np.linalg.cholesky(cov)

    def correlated(rng, database, n):  # a numpy black box: correlated on x = [1], not on [0]
        z = rng.standard_normal((n, d))
        return z @ chol.T if database[0] == 1 else z

    x, x_prime = np.array([1.0]), np.array([0.0])
    learned, fixed, families = [], [], collections.Counter()
    start = time.perf_counter()
    for r in range(reps):
        key = jax.random.key(seed * 100_003 + r)
        common = dict(n=N, progress=False)
        rep = rdpjax.audit(key, correlated, x, x_prime, 2.0, project="learn", **common)
        learned.append(float(rep.lower[0]))
        families[json.loads(rep.settings)["projection"]["family"]] += 1
        product = rdpjax.audit(
            key, correlated, x, x_prime, 2.0, project=lambda v: v[:, 0] * v[:, 1], **common
        )
        fixed.append(float(product.lower[0]))
    learned, fixed = np.array(learned), np.array(fixed)
    held = int(np.sum(learned <= exact))
    ci = stats.binomtest(held, reps).proportion_ci(method="wilson")
    return {
        "d": d,
        "rho": rho,
        "reps": reps,
        "exact": exact,
        "coverage": held / reps,
        "coverage_ci": [float(ci.low), float(ci.high)],
        "fixed_coverage": float(np.mean(fixed <= exact)),
        "learned_over_exact": float(learned.mean() / exact),
        "fixed_product_over_exact": float(fixed.mean() / exact),
        "families": dict(families),
        "seconds": time.perf_counter() - start,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--scale-reps", type=int, default=None, help="default: --reps")
    parser.add_argument("--split", action="store_true", help="measure the training share")
    parser.add_argument(
        "--fixed-share", action="store_true", help="no growth of the first training part"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cells", nargs="+", choices=["mean", "scale", "correlation"],
        default=["mean", "scale", "correlation"],
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    rdpjax.enable_compilation_cache()
    training = Training(fraction_max=0.0) if args.fixed_share else Training()
    rows = []
    if args.split:
        for share in (0.1, 0.2, 0.3, 0.5):
            share_training = dataclasses.replace(training, fraction=share)
            row = {"train_fraction": share, **mean_cell(100, args.reps, args.seed, share_training)}
            rows.append(row)
            print(
                f"share {share:.1f}: learned/oracle {row['learned_over_oracle']:.3f} "
                f"coverage {row['coverage']:.3f} [{row['seconds']:.0f} s]",
                flush=True,
            )
    else:
        for d in args.dims if "mean" in args.cells else ():
            row = mean_cell(d, args.reps, args.seed, training)
            rows.append(row)
            print(
                f"Gaussian d={d:5d}: coverage {row['coverage']:.3f} "
                f"[{row['coverage_ci'][0]:.3f}, {row['coverage_ci'][1]:.3f}]  learned "
                f"{row['mean_learned']:.4f}  oracle {row['mean_oracle']:.4f}  ratio "
                f"{row['learned_over_oracle']:.3f}  {row['families']}  n_train {row['n_train']}  "
                f"[{row['seconds']:.0f} s]",
                flush=True,
            )
        if "scale" in args.cells:
            row = scale_cell(args.scale_reps or args.reps, args.seed)
            rows.append(row)
            print(
                f"scale d=10: exact {row['exact']:.3f}  all families "
                f"{row['mean_all_over_exact']:.3f} of exact (coverage {row['coverage_all']:.3f}, "
                f"{row['families']})  linear only {row['mean_linear_over_exact']:.3f}  "
                f"[{row['seconds']:.0f} s]",
                flush=True,
            )
        if "correlation" in args.cells:
            row = correlation_cell(args.reps, args.seed)
            rows.append(row)
            print(
                f"correlation d=5, rho={row['rho']}: exact {row['exact']:.4f}  coverage "
                f"{row['coverage']:.3f} [{row['coverage_ci'][0]:.3f}, {row['coverage_ci'][1]:.3f}]"
                f"  learned/exact {row['learned_over_exact']:.3f}  fixed v0*v1/exact "
                f"{row['fixed_product_over_exact']:.3f}  {row['families']}  "
                f"[{row['seconds']:.0f} s]",
                flush=True,
            )
    out = args.out or RESULTS / (
        "learned_projection_split.json" if args.split else "learned_projection.json"
    )
    meta = {
        "command": "python benchmarks/calibration/learned_projection.py "
        + ("--split " if args.split else f"--dims {' '.join(map(str, args.dims))} ")
        + ("" if args.split else f"--cells {' '.join(args.cells)} ")
        + f"--reps {args.reps} --seed {args.seed}"
        + (f" --scale-reps {args.scale_reps}" if args.scale_reps else "")
        + (" --fixed-share" if args.fixed_share else ""),
        "n_per_side_total": N,
        "train_fraction": None if args.split else training.fraction,
        "train_fraction_max": training.fraction_max,
    }
    write_json(out, meta, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
