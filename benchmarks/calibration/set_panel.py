"""The fixed-n set test on a panel of laws, against jax_privacy on the same draws (issue 51).

    PYTHONPATH=. python benchmarks/calibration/set_panel.py [--part power|validity|refute|all]
        [--reps R] [--n 1e3 1e4 ...] [--laws gaussian laplace ...]

Writes ``benchmarks/results/calibration/set_panel.json`` (``set_panel_<part>.json`` per part).
Parts:

* **power**: certified ε(δ = 10⁻⁵) at α = 0.05 of :func:`rdpjax.rejection.set_test` and of
  ``jax_privacy.auditing.CanaryScoreAuditor(p, q).epsilon_clopper_pearson(0.05, delta=1e-5,
  one_sided=…)`` (the larger of one- and two-sided), on the *same* draws, R replications per
  (law, n): means, medians and the share of replications where rdpjax's is at least as large.
* **validity**: false refutations of tight true claims, R replications per cell, α = 0.05,
  with exact 95% intervals; each cell also on the same draws sorted (a legal sampler).
* **refute**: refutation rates of false claims by the default :func:`rdpjax.audit`-style
  test (the sets at α/2, as the audit runs them beside the Rényi bounds) and by jax_privacy.

The laws (P on x, Q on x'): ``gaussian`` N(1,1)/N(0,1) (ε(10⁻⁵) = 4.38); ``laplace`` b = 1,
shift 1 (ε = 1, a flat likelihood ratio); ``geometric`` two-sided, ε = 0.5, shift 1
(discrete, flat); ``cauchy`` shift 1 (heavy tails); ``mixture`` ½N(−2,1) + ½N(2,1) shifted by
0.5; ``subsampled`` the Poisson-subsampled Gaussian, rate 0.1, σ = 1, sensitivity 3;
``variance`` N(0, 2²)/N(0, 1) (a two-sided leak); ``rr8`` 8-ary randomized response at ε = 1
(codes).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import numpy as np
from scipy import stats

from rdpjax.claims import approx_dp, gdp, hockey_stick, pure_dp
from rdpjax.rejection import set_test

ALPHA, DELTA = 0.05, 1e-5
SEED = 1051  # draws of the power part (the defaults were tuned on seed 51: benchmarks/LOG.md)
OUT = Path("benchmarks/results/calibration")


def _geometric(rng, eps, n):
    a = 1 - np.exp(-eps)
    return rng.geometric(a, n) - rng.geometric(a, n)


def _rr(rng, k, eps, value, n):
    keep = np.exp(eps) / (np.exp(eps) + k - 1)
    other = rng.integers(0, k - 1, n)
    other = other + (other >= value)
    return np.where(rng.random(n) < keep, value, other).astype(np.int64)


LAWS = {
    "gaussian": lambda r, n: (r.normal(1, 1, n), r.normal(0, 1, n)),
    "laplace": lambda r, n: (r.laplace(1, 1, n), r.laplace(0, 1, n)),
    "geometric": lambda r, n: (_geometric(r, 0.5, n) + 1, _geometric(r, 0.5, n)),
    "cauchy": lambda r, n: (r.standard_cauchy(n) + 1, r.standard_cauchy(n)),
    "mixture": lambda r, n: (
        r.normal(0, 1, n) + np.where(r.random(n) < 0.5, -2, 2) + 0.5,
        r.normal(0, 1, n) + np.where(r.random(n) < 0.5, -2, 2),
    ),
    "subsampled": lambda r, n: (r.normal(0, 1, n) + 3.0 * (r.random(n) < 0.1), r.normal(0, 1, n)),
    "variance": lambda r, n: (r.normal(0, 2, n), r.normal(0, 1, n)),
    "rr8": lambda r, n: (_rr(r, 8, 1.0, 0, n), _rr(r, 8, 1.0, 1, n)),
}


def _rate(hits: int, reps: int) -> dict:
    ci = stats.binomtest(hits, reps).proportion_ci(0.95, method="exact")
    return {"count": hits, "reps": reps, "rate": hits / reps, "ci95": [ci.low, ci.high]}


def _jax_privacy(p, q, delta=DELTA) -> float:
    from jax_privacy.auditing import CanaryScoreAuditor

    a = CanaryScoreAuditor(p, q)
    return max(a.epsilon_clopper_pearson(ALPHA, delta=delta, one_sided=s) for s in (True, False))


def part_power(laws, sizes, reps, delta=DELTA) -> list[dict]:
    rows = []
    for law in laws:
        for n in sizes:
            r_n = reps if n < 10**6 else max(6, reps // 5) if reps < 30 else reps
            ours, theirs, t_ours, t_theirs = [], [], 0.0, 0.0
            for r in range(r_n):
                p, q = LAWS[law](np.random.default_rng([n, r, SEED]), n)
                t = time.perf_counter()
                res = set_test(jax.random.key(r), p, q, approx_dp(100.0, delta), alpha=ALPHA)
                ours.append(max(res.epsilon, 0.0))
                t_ours += time.perf_counter() - t
                t = time.perf_counter()
                theirs.append(max(_jax_privacy(p, q, delta), 0.0))
                t_theirs += time.perf_counter() - t
            a, b = np.array(ours), np.array(theirs)
            row = {
                "law": law, "n": n, "reps": r_n, "delta": delta,
                "rdpjax_mean": float(a.mean()), "rdpjax_median": float(np.median(a)),
                "jax_privacy_mean": float(b.mean()), "jax_privacy_median": float(np.median(b)),
                "ratio_of_means": float(a.mean() / b.mean()) if b.mean() > 0 else None,
                "share_rdpjax_at_least": float(np.mean(a >= b)),
                "seconds_rdpjax": t_ours / r_n, "seconds_jax_privacy": t_theirs / r_n,
            }  # fmt: skip
            rows.append(row)
            print(
                f"{law:>10} n={n:>8,} R={r_n:>3}: rdpjax {row['rdpjax_mean']:.3f} "
                f"(median {row['rdpjax_median']:.3f})  jax_privacy {row['jax_privacy_mean']:.3f} "
                f"(median {row['jax_privacy_median']:.3f})  ratio {row['ratio_of_means'] or 0:.3f}"
                f"  rdpjax ≥ in {row['share_rdpjax_at_least']:.0%}",
                flush=True,
            )
    return rows


DENSITIES = {  # (pdf on x, pdf on x') of the continuous laws without a closed-form curve
    "cauchy": (lambda v: stats.cauchy.pdf(v - 1), stats.cauchy.pdf),
    "mixture": (
        lambda v: 0.5 * stats.norm.pdf(v + 1.5) + 0.5 * stats.norm.pdf(v - 2.5),
        lambda v: 0.5 * stats.norm.pdf(v + 2) + 0.5 * stats.norm.pdf(v - 2),
    ),
    "subsampled": (lambda v: 0.9 * stats.norm.pdf(v) + 0.1 * stats.norm.pdf(v - 3), stats.norm.pdf),
    "variance": (lambda v: stats.norm.pdf(v, 0, 2), stats.norm.pdf),
}


def hockey_stick_delta(law: str, eps: float) -> float:
    """δ(ε) = max over both directions of ∫ (p − e^ε q)₊, by scipy quadrature (independent of
    rdpjax), so that ``approx_dp(eps, δ(eps))`` is a true claim on its boundary."""
    from scipy import integrate

    p, q = DENSITIES[law]
    out = 0.0
    for a, b in ((p, q), (q, p)):
        f = lambda v, a=a, b=b: max(a(v) - np.exp(eps) * b(v), 0.0)  # noqa: E731
        pieces = [(-np.inf, -20), (-20, -5), (-5, 5), (5, 20), (20, np.inf)]
        out = max(out, sum(integrate.quad(f, lo, hi, limit=200)[0] for lo, hi in pieces))
    return out


ON_CURVE = {"cauchy": 0.9, "mixture": 1.0, "subsampled": 1.0, "variance": 1.0}


def _tight_claims():
    return {
        "gaussian": [gdp(1.0), approx_dp(1.0, float(hockey_stick(gdp(1.0), 1.0))),
                     approx_dp(4.38, DELTA)],
        "laplace": [pure_dp(1.0)],
        "geometric": [pure_dp(0.5)],
        "rr8": [pure_dp(1.0)],
        # on the curve at ε = 1 (Cauchy shift 1 is 0.962-DP: at ε = 0.9)
        **{law: [approx_dp(e, hockey_stick_delta(law, e))] for law, e in ON_CURVE.items()},
    }  # fmt: skip


def part_validity(sizes, reps) -> list[dict]:
    rows = []
    for law, claims in _tight_claims().items():
        for n in sizes:
            for claim in claims:
                hits = {"as drawn": 0, "sorted": 0}
                for r in range(reps):
                    p, q = LAWS[law](np.random.default_rng([n, r, 4051]), n)
                    k = jax.random.key(10_000 + r)
                    hits["as drawn"] += int(set_test(k, p, q, claim, alpha=ALPHA).refuted)
                    hits["sorted"] += int(
                        set_test(k, np.sort(p), np.sort(q), claim, alpha=ALPHA).refuted
                    )
                for order, h in hits.items():
                    row = {
                        "law": law,
                        "n": n,
                        "claim": str(claim),
                        "order": order,
                        **_rate(h, reps),
                    }
                    rows.append(row)
                    print(
                        f"{law:>10} n={n:>7,} {str(claim):<34} {order:>8}: {h}/{reps} = "
                        f"{h / reps:.3f} [{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}]",
                        flush=True,
                    )
    return rows


def part_refute(reps) -> list[dict]:
    cells = [
        ("geometric", 20_000, approx_dp(0.35, 0.0), None),
        ("geometric", 20_000, pure_dp(0.35), None),
        ("rr8", 2_000, pure_dp(0.7), None),
        ("rr8", 2_000, pure_dp(0.7), "score"),
    ]
    rows = []
    for law, n, claim, score in cells:
        ours = theirs = 0
        for r in range(reps):
            p, q = LAWS[law](np.random.default_rng([n, r, 5051]), n)
            if score:  # the natural score: 1{o = the true value on x}
                p, q = (p == 0).astype(np.int64), (q == 0).astype(np.int64)
            res = set_test(jax.random.key(r), p, q, claim, alpha=ALPHA / 2)
            ours += int(res.refuted)
            theirs += int(
                _jax_privacy(p.astype(float), q.astype(float), delta=0.0)
                > float(claim.params["epsilon"])
            )
        row = {"law": law, "n": n, "claim": str(claim), "score": score,
               "rdpjax": _rate(ours, reps), "jax_privacy": _rate(theirs, reps)}  # fmt: skip
        rows.append(row)
        counts = f"rdpjax {ours}/{reps}, jax_privacy {theirs}/{reps}"
        print(f"{law} n={n:,} {claim} score={score}: {counts}")
    return rows


def _sampler(law: str, order: str):
    """A numpy black box ``sample(rng, database, m)`` of ``law`` (database [1]: P, [0]: Q) that
    returns its batch as drawn, sorted, or grouped (``np.repeat`` of the distinct values)."""

    def sample(rng, database, m):
        p, q = LAWS[law](rng, m)
        out = p if database[0] == 1 else q
        if order == "sorted":
            return np.sort(out)
        if order == "repeat":
            values, counts = np.unique(out, return_counts=True)
            return np.repeat(values, counts)
        return out

    return sample


def part_audit_order(reps: int, n: int) -> list[dict]:
    """False refutations of tight claims by the default fixed-n ``rdpjax.audit`` (both families)
    on samplers returning their batch sorted or grouped; the first replications also as drawn,
    which must give the identical verdict (the audit orders the draws by its key)."""
    import rdpjax

    cells = [("gaussian", gdp(1.0)), ("laplace", pure_dp(1.0)), ("geometric", pure_dp(0.5))]
    rows = []
    for law, claim in cells:
        for order in ("sorted", "repeat"):
            hits = same = checked = 0
            for r in range(reps):
                kw = dict(n=n, claim=claim, progress=False)
                report = rdpjax.audit(
                    jax.random.key(20_000 + r), _sampler(law, order), [1], [0], **kw
                )
                hits += int(report.is_refuted)
                if r < 20:
                    drawn = rdpjax.audit(
                        jax.random.key(20_000 + r), _sampler(law, "drawn"), [1], [0], **kw
                    )
                    checked += 1
                    same += int(
                        drawn.verdict() == report.verdict()
                        and np.array_equal(drawn.lower, report.lower)
                    )
            row = {"law": law, "claim": str(claim), "order": order, "n": n,
                   "identical_to_as_drawn": f"{same}/{checked}", **_rate(hits, reps)}  # fmt: skip
            rows.append(row)
            print(
                f"{law:>10} {order:>7} n={n:,} {str(claim):<16}: {hits}/{reps} = "
                f"{hits / reps:.3f} [{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}], identical to "
                f"as drawn in {same}/{checked}",
                flush=True,
            )
    return rows


def tables() -> None:
    """Print the docs' Markdown tables from the JSON files of the other parts."""
    power = []
    for name in ("set_panel_power.json", "set_panel_power_1e6.json"):
        if (OUT / name).exists():
            power += json.loads((OUT / name).read_text()).get("power", [])
    head = "| law | n per side | R | rdpjax mean (median) | jax_privacy mean (median) | ratio |"
    print(head + " rdpjax ≥ |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted(power, key=lambda r: (list(LAWS).index(r["law"]), r["n"])):
        ratio = f"{r['ratio_of_means']:.3f}" if r["ratio_of_means"] else "—"
        print(
            f"| {r['law']} | {r['n']:,} | {r['reps']} | {r['rdpjax_mean']:.3f} "
            f"({r['rdpjax_median']:.3f}) | {r['jax_privacy_mean']:.3f} "
            f"({r['jax_privacy_median']:.3f}) | {ratio} | {r['share_rdpjax_at_least']:.0%} |"
        )
    path = OUT / "set_panel_validity.json"
    if path.exists():
        rows = json.loads(path.read_text())["validity"]
        print("\n| law | claim | n per side | as drawn | sorted |")
        print("|---|---|---|---|---|")
        for i in range(0, len(rows), 2):
            a, b = rows[i], rows[i + 1]
            cell = lambda r: f"{r['count']}/{r['reps']} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"  # noqa: E731
            print(f"| {a['law']} | `{a['claim']}` | {a['n']:,} | {cell(a)} | {cell(b)} |")
    path = OUT / "set_panel_refute.json"
    if path.exists():
        rows = json.loads(path.read_text())["refute"]
        print("\n| law | n per side | false claim | score | rdpjax (sets at α/2) | jax_privacy |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            a, b = r["rdpjax"], r["jax_privacy"]
            score = "1{o = true value}" if r["score"] else "none (the codes)"
            print(
                f"| {r['law']} | {r['n']:,} | `{r['claim']}` | {score} | "
                f"{a['count']}/{a['reps']} | {b['count']}/{b['reps']} |"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--part",
        default="all",
        choices=["power", "validity", "refute", "audit-order", "all", "tables"],
    )
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--n", type=float, nargs="+", default=None)
    ap.add_argument("--laws", nargs="+", default=list(LAWS))
    ap.add_argument("--delta", type=float, default=DELTA, help="the δ of the power part")
    ap.add_argument("--out", default=None, help="JSON file (default set_panel[_<part>].json)")
    args = ap.parse_args()
    if args.part == "tables":
        tables()
        return
    command = "PYTHONPATH=. python benchmarks/calibration/set_panel.py " + " ".join(
        f"--{k} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if v is not None
    )
    print(command)
    out: dict = {"command": command, "alpha": ALPHA, "delta": args.delta}
    parts = ["power", "validity", "refute"] if args.part == "all" else [args.part]
    for part in parts:
        if part == "power":
            sizes = [int(v) for v in (args.n or [1e3, 1e4, 1e5])]
            out["power"] = part_power(args.laws, sizes, args.reps or 30, args.delta)
        elif part == "validity":
            sizes = [int(v) for v in (args.n or [1e3, 1e4])]
            out["validity"] = part_validity(sizes, args.reps or 200)
        elif part == "audit-order":
            out["audit_order"] = part_audit_order(args.reps or 400, int((args.n or [2000])[0]))
        else:
            out["refute"] = part_refute(args.reps or 100)
    name = "set_panel.json" if args.part == "all" else f"set_panel_{args.part}.json"
    path = Path(args.out) if args.out else OUT / name
    path.write_text(json.dumps(out, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
