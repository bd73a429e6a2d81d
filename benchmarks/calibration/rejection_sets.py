"""Certified rejection sets: against jax_privacy's Clopper–Pearson auditor, and their error rates.

    PYTHONPATH=. python benchmarks/calibration/rejection_sets.py [--part all|jax|validity|libraries]

(``PYTHONPATH=.``: the checkout's rdpjax; the JSON records which.) Writes
``benchmarks/results/calibration/rejection_sets.json``. Three parts:

* **jax** (the Gaussian alone; the panel of laws is ``set_panel.py``): N(1,1) vs N(0,1)
  (the Gaussian mechanism at μ = 1; true ε(δ = 10⁻⁵) = 4.38). On the
  *same* draws, rdpjax's :func:`rdpjax.rejection.set_test` (ε at δ = 10⁻⁵, α = 0.05) and
  ``jax_privacy.auditing.CanaryScoreAuditor(p, q).epsilon_clopper_pearson(0.05, delta=1e-5)``
  (Bonferroni over every threshold, all draws), R replications per n. Also rdpjax's certified μ
  (claim ``gdp(1)``). Printed: means, medians, and the share of replications where rdpjax's
  bound is the larger.
* **validity**: false refutations of true claims, R = 200 per cell, α = 0.05, with exact
  (Clopper–Pearson) 95% intervals; a rate above 0.05 would be a bug. Cells: Gaussian μ = 1
  against ``approx_dp(4.38, 1e-5)``, ``approx_dp(1, δ_1(1))`` (on its hockey-stick curve) and
  ``gdp(1)``; Laplace (b = 1, shift 1) against ``approx_dp(1, 0)`` (tight: ε-DP with ε = 1);
  randomized response at ε = 1 against ``approx_dp(1, 0)``; diffprivlib's ``Geometric``
  (ε = 1, a discrete library mechanism) against ``approx_dp(1, 0)``.
* **stream**: the same Gaussian pair at n = 10⁹ a side (``--stream-n``), drawn and counted per
  cell inside one compiled scan a side (:func:`rdpjax.rejection.streamed.streamed_set_test`);
  the selection is 5% of n, capped at 2²⁴ draws a side.
* **libraries**: diffprivlib's ``GaussianAnalytic`` and PyDP's ``GaussianMechanism`` at their
  stated (ε, δ) = (1, 10⁻⁵), audited through :func:`rdpjax.audit` with
  ``claim=approx_dp(1, 1e-5)``, and with the false claim ``approx_dp(0.25, 1e-5)``.
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
from rdpjax.claims import approx_dp, gdp, hockey_stick
from rdpjax.rejection import set_test

ALPHA = 0.05
DELTA = 1e-5
JAX_REPS = {10**3: 200, 10**4: 100, 10**5: 30, 10**6: 6}


def _rate(hits: int, reps: int) -> dict:
    ci = stats.binomtest(hits, reps).proportion_ci(0.95, method="exact")
    return {"count": hits, "reps": reps, "rate": hits / reps, "ci95": [ci.low, ci.high]}


def part_jax() -> list[dict]:
    from jax_privacy.auditing import CanaryScoreAuditor

    rows = []
    for n, reps in JAX_REPS.items():
        ours, theirs, mus, t_ours, t_theirs = [], [], [], 0.0, 0.0
        for r in range(reps):
            rng = np.random.default_rng([n, r])
            p, q = rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)
            t = time.perf_counter()
            ours.append(
                set_test(jax.random.key(r), p, q, approx_dp(4.38, DELTA), alpha=ALPHA).epsilon
            )
            t_ours += time.perf_counter() - t
            t = time.perf_counter()
            theirs.append(CanaryScoreAuditor(p, q).epsilon_clopper_pearson(ALPHA, delta=DELTA))
            t_theirs += time.perf_counter() - t
            mus.append(set_test(jax.random.key(r), p, q, gdp(1.0), alpha=ALPHA).mu)
        ours_a, theirs_a = np.array(ours), np.array(theirs)
        row = {
            "n": n,
            "reps": reps,
            "rdpjax_mean": float(ours_a.mean()),
            "rdpjax_median": float(np.median(ours_a)),
            "jax_privacy_mean": float(theirs_a.mean()),
            "jax_privacy_median": float(np.median(theirs_a)),
            "share_rdpjax_larger": float(np.mean(ours_a >= theirs_a)),
            "rdpjax_mu_mean": float(np.mean(mus)),
            "seconds_rdpjax": t_ours / reps,
            "seconds_jax_privacy": t_theirs / reps,
        }
        rows.append(row)
        print(
            f"n={n:>9,} R={reps:>3}  ε(1e-5) ≥ rdpjax {row['rdpjax_mean']:.3f} "
            f"(median {row['rdpjax_median']:.3f})  jax_privacy {row['jax_privacy_mean']:.3f} "
            f"(median {row['jax_privacy_median']:.3f})  "
            f"ratio {row['rdpjax_mean'] / row['jax_privacy_mean']:.3f}  "
            f"rdpjax ≥ in {row['share_rdpjax_larger']:.0%}  μ ≥ {row['rdpjax_mu_mean']:.3f}",
            flush=True,
        )
    return rows


def part_variance(n: int = 10**5, reps: int = 20) -> dict:
    """A leak in the variance, N(0, 2²) vs N(0, 1): no one threshold of the output is the test.

    jax_privacy is given its best chance (``one_sided=False``: thresholds in both directions).
    """
    from jax_privacy.auditing import CanaryScoreAuditor

    ours, theirs = [], []
    for r in range(reps):
        rng = np.random.default_rng([n, r, 99])
        p, q = rng.normal(0.0, 2.0, n), rng.normal(0.0, 1.0, n)
        ours.append(set_test(jax.random.key(r), p, q, approx_dp(10.0, DELTA), alpha=ALPHA).epsilon)
        auditor = CanaryScoreAuditor(p, q)
        theirs.append(auditor.epsilon_clopper_pearson(ALPHA, delta=DELTA, one_sided=False))
    row = {"n": n, "reps": reps, "rdpjax_mean": float(np.mean(ours)),
           "jax_privacy_two_sided_mean": float(np.mean(theirs))}  # fmt: skip
    print(
        f"variance leak N(0,4) vs N(0,1), n={n:,} R={reps}: ε(1e-5) ≥ rdpjax "
        f"{row['rdpjax_mean']:.3f}, jax_privacy (two-sided) "
        f"{row['jax_privacy_two_sided_mean']:.3f}",
        flush=True,
    )
    return row


def _gaussian(rng, n):
    return rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)


def _laplace(rng, n):
    return rng.laplace(1.0, 1.0, n), rng.laplace(0.0, 1.0, n)


def _rr(rng, n):
    keep = np.e / (1 + np.e)
    return (rng.random(n) < keep).astype(np.int64), (rng.random(n) >= keep).astype(np.int64)


def _geometric(rng, n):
    from diffprivlib.mechanisms import Geometric

    mech = Geometric(epsilon=1.0, sensitivity=1, random_state=int(rng.integers(2**31)))
    return (
        np.array([mech.randomise(1) for _ in range(n)], np.int64),
        np.array([mech.randomise(0) for _ in range(n)], np.int64),
    )


def validity_cells():
    d1 = float(hockey_stick(gdp(1.0), 1.0))
    return [
        ("Gaussian mu=1", _gaussian, approx_dp(4.38, DELTA), (10**4, 10**5)),
        ("Gaussian mu=1", _gaussian, approx_dp(1.0, d1), (10**4, 10**5)),
        ("Gaussian mu=1", _gaussian, gdp(1.0), (10**4, 10**5)),
        ("Laplace b=1", _laplace, approx_dp(1.0, 0.0), (10**4, 10**5)),
        ("randomized response eps=1", _rr, approx_dp(1.0, 0.0), (10**3, 10**4)),
        ("diffprivlib Geometric eps=1", _geometric, approx_dp(1.0, 0.0), (10**3, 10**4)),
    ]


def part_validity(reps: int) -> list[dict]:
    rows = []
    for name, draw, claim, sizes in validity_cells():
        for n in sizes:
            hits, eps = 0, []
            for r in range(reps):
                p, q = draw(np.random.default_rng([n, r, 7]), n)
                result = set_test(jax.random.key(r), p, q, claim, alpha=ALPHA)
                hits += result.refuted
                eps.append(result.mu if claim.kind == "gdp" else result.epsilon)
            row = {"mechanism": name, "claim": str(claim), "n": n, **_rate(hits, reps)}
            row["bound_mean"] = float(np.mean(np.where(np.isfinite(eps), eps, np.nan)))
            rows.append(row)
            print(
                f"{name:<30} {str(claim):<36} n={n:>7,}  false refutations {hits}/{reps} "
                f"= {hits / reps:.3f} [{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}]  "
                f"mean bound {row['bound_mean']:.3f}",
                flush=True,
            )
    return rows


def _diffprivlib(rng, database, m):
    from diffprivlib.mechanisms import GaussianAnalytic

    mech = GaussianAnalytic(
        epsilon=1.0, delta=DELTA, sensitivity=1.0, random_state=int(rng.integers(2**31))
    )
    value = float(np.sum(database))
    return np.array([mech.randomise(value) for _ in range(m)])


def _pydp(rng, database, m):
    from pydp.algorithms.numerical_mechanisms import GaussianMechanism

    mech = GaussianMechanism(epsilon=1.0, delta=DELTA, sensitivity=1.0)
    value = float(np.sum(database))
    return np.array([mech.add_noise(value) for _ in range(m)])


def part_libraries(n: int, keys: int = 1) -> list[dict]:
    rows = []
    for name, sample in [
        ("diffprivlib GaussianAnalytic", _diffprivlib),
        ("PyDP GaussianMechanism", _pydp),
    ]:
        for claim in (approx_dp(1.0, DELTA), approx_dp(0.25, DELTA)):
            for k in range(keys):
                t = time.perf_counter()
                report = rdpjax.audit(
                    jax.random.key(k), sample, [1.0], [0.0], n=n, claim=claim, progress=False
                )
                row = {
                    "library": name,
                    "claim": str(claim),
                    "n": n,
                    "key": k,
                    "refuted": report.is_refuted,
                    "epsilon_lower": report.sets.epsilon,
                    "mu_lower": report.sets.mu,
                    "seconds": time.perf_counter() - t,
                    "verdict": report.verdict(),
                }
                rows.append(row)
                print(f"{name:<30} key {k}: {row['verdict']}  ({row['seconds']:.0f} s)", flush=True)
    return rows


def part_stream(n: int) -> dict:
    import jax.numpy as jnp

    from rdpjax._precision import float64
    from rdpjax.rejection.streamed import streamed_set_test
    from rdpjax.stream import JaxSamplers

    def sample_p(key, m):
        return 1.0 + jax.random.normal(key, (m,), jnp.float64)

    def sample_q(key, m):
        return jax.random.normal(key, (m,), jnp.float64)

    t = time.perf_counter()
    with float64():
        result = streamed_set_test(
            jax.random.key(0),
            JaxSamplers(sample_p, sample_q),
            approx_dp(4.38, DELTA),
            n=n,
            alpha=ALPHA,
        )
    seconds = time.perf_counter() - t
    print(result, f"\n({seconds:.0f} s)", flush=True)
    return {"n": n, "seconds": seconds, **result.to_dict()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", default="all", choices=["all", "jax", "validity", "libraries", "stream"]
    )
    parser.add_argument("--reps", type=int, default=200, help="replications per validity cell")
    parser.add_argument("--library-n", type=int, default=10**6)
    parser.add_argument("--keys", type=int, default=1, help="audit keys per library and claim")
    parser.add_argument("--stream-n", type=int, default=10**9)
    parser.add_argument("--out", default="benchmarks/results/calibration/rejection_sets.json")
    args = parser.parse_args(argv)
    print(f"rdpjax from {Path(rdpjax.__file__).parent}", flush=True)
    out = Path(args.out)
    result = json.loads(out.read_text()) if out.exists() else {}  # parts run separately merge
    command = "PYTHONPATH=. python benchmarks/calibration/rejection_sets.py " + " ".join(
        argv if argv is not None else __import__("sys").argv[1:]
    )
    parts = ("jax", "validity", "libraries", "stream") if args.part == "all" else (args.part,)
    result.pop("command", None)
    result.setdefault("commands", {}).update({part: command for part in parts})
    result["rdpjax"] = str(Path(rdpjax.__file__).parent)
    if args.part in ("all", "jax"):
        result["jax_privacy"] = part_jax()
        result["variance_leak"] = part_variance()
    if args.part in ("all", "validity"):
        result["validity"] = part_validity(args.reps)
    if args.part in ("all", "libraries"):
        result["libraries"] = part_libraries(args.library_n, args.keys)
    if args.part in ("all", "stream"):
        result["stream"] = part_stream(args.stream_n)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
