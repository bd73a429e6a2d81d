"""Is jax_privacy's one-run bound valid? Rates of bounds above the truth, both libraries.

    PYTHONPATH=. python benchmarks/calibration/canaries_peer_validity.py --part null \
        [--m 1000 10000] [--reps 200] [--block 0] [--out benchmarks/results/calibration/X.json]
    PYTHONPATH=. python benchmarks/calibration/canaries_peer_validity.py --part gaussian \
        [--m 1000] [--eps 2 4 8] [--reps 200]
    PYTHONPATH=. python benchmarks/calibration/canaries_peer_validity.py --part rr|laws ...

(``PYTHONPATH=.``: the checkout's rdpjax.) jax_privacy 2.0's
``CanaryScoreAuditor(in, out).epsilon_one_run`` and ``epsilon_one_run_fdp`` (significance 0.05,
δ = 10⁻⁵, default ``Bonferroni()`` threshold strategy) keep only the thresholds on the convex
hull of the empirical ROC, a set computed with the inclusion bits, and divide the significance by
the size K of that set (auditing.py: ``_get_tn_fn_counts`` → ``_pareto_frontier``;
``_audit_with_threshold_strategy``). This script measures, on the *same* scores for both
libraries, how often each bound exceeds the true ε (a valid level-0.05 bound: at most 5%):

* jax ``epsilon_one_run`` (``jax_steinke``) and ``epsilon_one_run_fdp`` (``jax_fdp``), as a
  user calls them;
* the same hull search at significance α/T, T the number of distinct thresholds (every distinct
  score and +∞, a set the bits do not choose): ``jax_steinke_all``, ``jax_fdp_all`` (private
  ``_epsilon_one_run_all_thresholds``; a union bound over every threshold, valid for distinct
  scores where threshold t is the top-k guess set of a k fixed in advance);
* rdpjax's ``one_run_bits`` (``ours_epsilon``: any (ε, δ)-DP mechanism; ``ours_gaussian``: the
  ε(δ) of the certified μ, the bound the power table sets beside ``jax_fdp``; ``ours_mu``).

``jax_fdp``, ``jax_fdp_all`` and ``ours_gaussian`` refute the Gaussian tradeoff curve that is
(ε, δ)-DP, so they are ε lower bounds only for mechanisms dominated by that curve: the null and
the Gaussian cells test their validity; on other laws a rate above 5% is a wrong model, not an
invalid test (the JSON marks them ``gaussian_shaped``).

Parts (bits b_i ~ Bernoulli(½), α = 0.05, δ = 10⁻⁵, R = ``--reps`` per cell):

* **null**: in and out from one law, truth ε = 0 (rate: ε > 0): ``normal`` N(0, 1) with
  canaries.py's null seeds ``[2, m, r]``; ``rounded`` round(N(0, 1)) with its ``ties`` seeds
  ``[6, m, r]`` (the same scores, so ours reproduces ``results/calibration/canaries.json``).
* **gaussian**: N(μ b_i, 1), μ the Gaussian mechanism's at (ε, 10⁻⁵)-DP, canaries.py's
  validity seeds ``[3, m, 100ε, r]``; truth ε (and μ).
* **rr**: randomized response, score b_i XOR Bernoulli(1/(1 + e^ε)) (ties: scores 0 and 1),
  seeds ``[8, m, 100ε, r]``; truth ε at δ = 0, so ε at δ = 10⁻⁵ too.
* **laws**: canary_split.py's panel laws with a computable truth (seeds ``[7, m, law, r]``, the
  panel's): ``gauss``, ``laplace``, ``memorized``, ``subsampled``, ``sparse``, ``rounded``; the
  truth is the ε at δ = 10⁻⁵ of the pair (law | b = 1, law | b = 0), from the hockey-stick
  divergence on a grid (:func:`true_epsilon`).

``--block k`` takes replications r = kR … (k + 1)R − 1 (a second seed block: ``--block 1``).
Cells merge into ``--out`` (default ``benchmarks/results/calibration/canaries_peer_validity.json``)
by (part, law, ε, m, block), with each rate's exact (Clopper–Pearson) 95% interval.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.optimize
from scipy import stats

sys.path[:0] = [str(Path(__file__).resolve().parent)]
from canaries import ALPHA, DELTA, _gaussian, _mu, _rate  # noqa: E402
from canary_split import LAWS, MU4, _law  # noqa: E402

from rdpjax.canaries import one_run_bits  # noqa: E402

OUT = (
    Path(__file__).resolve().parents[1] / "results" / "calibration" / "canaries_peer_validity.json"
)
METHODS = (
    "jax_steinke",
    "jax_fdp",
    "jax_steinke_all",
    "jax_fdp_all",
    "ours_epsilon",
    "ours_gaussian",
)
GAUSSIAN_SHAPED = ("jax_fdp", "jax_fdp_all", "ours_gaussian")
PANEL_LAWS = ("gauss", "laplace", "memorized", "subsampled", "sparse", "rounded")


def bounds(scores: np.ndarray, bits: np.ndarray) -> dict:
    """Every method's ε (and ours μ, jax's hull size K, the distinct thresholds T)."""
    from jax_privacy.auditing import CanaryScoreAuditor

    auditor = CanaryScoreAuditor(scores[bits == 1], scores[bits == 0])
    hull = len(auditor._fn_counts)  # the thresholds kept, the Bonferroni divisor
    every = np.unique(scores).size + 1  # every distinct score and +inf
    search = auditor._epsilon_one_run_all_thresholds
    ours = one_run_bits(scores, bits, delta=DELTA, alpha=ALPHA)
    return {
        "jax_steinke": float(auditor.epsilon_one_run(ALPHA, DELTA)),
        "jax_fdp": float(auditor.epsilon_one_run_fdp(ALPHA, DELTA)),
        "jax_steinke_all": float(search(ALPHA / every, DELTA, True)[0]),
        "jax_fdp_all": float(search(ALPHA / every, DELTA, True, use_fdp=True)[0]),
        "ours_epsilon": float(ours.epsilon),
        "ours_gaussian": float(ours.epsilon_gaussian),
        "ours_mu": float(ours.mu),
        "hull": hull,
        "thresholds": every,
    }


def _null_normal(r: int, m: int):
    return _gaussian([2, m, r], m, 0.0)  # canaries.py validity_cells' null


def _null_rounded(r: int, m: int):
    rng = np.random.default_rng([6, m, r])  # canaries.py tied_cells' null_rounded
    bits = rng.integers(0, 2, m)
    return np.round(rng.normal(0, 1, m)), bits


def _rr(eps: float, r: int, m: int):
    rng = np.random.default_rng([8, m, int(100 * eps), r])
    bits = rng.integers(0, 2, m)
    flip = rng.random(m) < 1.0 / (1.0 + np.exp(eps))
    return (bits ^ flip).astype(float), bits


def _hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """max(H_ε(p‖q), H_ε(q‖p)) for masses p, q on one grid."""
    e = np.exp(eps)
    return max(np.maximum(p - e * q, 0).sum(), np.maximum(q - e * p, 0).sum())


def _law_masses(law: str) -> tuple[np.ndarray, np.ndarray]:
    """The masses of (score | b = 1, score | b = 0) of a panel law on a fine grid."""
    if law == "rounded":
        k = np.arange(-40, 41, dtype=float)
        cdf = lambda x: stats.norm.cdf(x)  # noqa: E731
        return cdf(k + 0.5 - MU4) - cdf(k - 0.5 - MU4), cdf(k + 0.5) - cdf(k - 0.5)
    x, dx = np.linspace(-20.0, 30.0, 1_000_001, retstep=True)
    n0 = stats.norm.pdf(x)
    mix = {"memorized": (0.2, 4.0), "subsampled": (0.5, 3.0), "sparse": (0.03, 6.0)}
    if law == "gauss":
        p1, p0 = stats.norm.pdf(x - MU4), n0
    elif law == "laplace":
        p1, p0 = stats.laplace.pdf(x - 1.0, scale=0.25), stats.laplace.pdf(x, scale=0.25)
    elif law in mix:
        share, shift = mix[law]
        p1, p0 = (1 - share) * n0 + share * stats.norm.pdf(x - shift), n0
    else:
        raise ValueError(law)
    return p1 * dx, p0 * dx


def true_epsilon(law: str, delta: float = DELTA) -> float:
    """The smallest ε at which law's pair of score laws is (ε, δ)-indistinguishable."""
    p1, p0 = _law_masses(law)
    return float(scipy.optimize.brentq(lambda e: _hockey(p1, p0, e) - delta, 0.0, 40.0))


def cell(name: str, m: int, reps: int, block: int, draw, truth: float, mu=None) -> dict:
    """Rates of each method's bound above ``truth`` over replications of ``draw(r)``."""
    rows, start = [], time.perf_counter()
    for r in range(block * reps, (block + 1) * reps):
        scores, bits = draw(r)
        rows.append(bounds(scores, bits))
    tol = 1e-9  # brentq's xtol is 1e-6 on ε; a bound counts as above the truth past this
    out = {"seconds": time.perf_counter() - start, "truth": truth, "reps": reps, "block": block}
    first = block * reps
    for key in (*METHODS, "ours_mu"):
        vals = np.array([row[key] for row in rows])
        limit = mu if key == "ours_mu" else truth
        if limit is None:
            continue
        above = vals > limit + tol
        out[key] = {
            "above": _rate(int(above.sum()), reps),
            "mean": float(vals.mean()),
            "above_reps": [[first + int(i), float(vals[i])] for i in np.flatnonzero(above)],
            "gaussian_shaped": key in GAUSSIAN_SHAPED,
        }
    for key in ("hull", "thresholds"):
        vals = np.array([row[key] for row in rows])
        out[key] = {"mean": float(vals.mean()), "min": int(vals.min()), "max": int(vals.max())}
    return {"cell": name, "m": m} | out


def _line(c: dict) -> str:
    rates = " ".join(
        f"{k} {c[k]['above']['count']}/{c['reps']} (mean {c[k]['mean']:.3f})"
        for k in (*METHODS, "ours_mu")
        if k in c
    )
    head = f"{c['cell']} {c.get('law', '')} eps={c.get('eps', 0):g} m={c['m']} b{c['block']}"
    return f"{head} truth {c['truth']:.4f} K~{c['hull']['mean']:.1f}: {rates} ({c['seconds']:.0f}s)"


def _same(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in ("cell", "law", "eps", "m", "block"))


def _merge(cells: list[dict], command: str, out: Path) -> None:
    old = json.loads(out.read_text()) if out.exists() else {}
    keep = [c for c in old.get("cells", []) if not any(_same(c, n) for n in cells)]
    old["cells"] = keep + cells
    old["commands"] = old.get("commands", []) + [command] * (command not in old.get("commands", []))
    old["settings"] = {"alpha": ALPHA, "delta": DELTA, "methods": list(METHODS)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(old, indent=1, default=float) + "\n")


def table(result: dict) -> str:
    """Markdown: one row per cell, blocks pooled; each method's count above the truth, 95% CI."""
    heads = ("jax Steinke", "jax f-DP", "jax Steinke α/T", "jax f-DP α/T", "ours ε", "ours ε(μ̂)")
    lines = [
        "| cell | m | truth ε | blocks | K (mean) | " + " | ".join(heads) + " |",
        "|---|---|---|---|---|" + "---|" * len(heads),
    ]
    pooled: dict[tuple, list[dict]] = {}
    for c in result["cells"]:
        key = (c["cell"], c.get("law", ""), c["m"], c.get("eps", 0))
        pooled.setdefault(key, []).append(c)
    for key in sorted(pooled):
        group = sorted(pooled[key], key=lambda c: c["block"])
        c, reps = group[0], sum(g["reps"] for g in group)
        name = c["cell"] + (f" {c['law']}" if "law" in c else "")
        hull = sum(g["hull"]["mean"] * g["reps"] for g in group) / reps
        rates = []
        for method in METHODS:
            a = _rate(sum(g[method]["above"]["count"] for g in group), reps)
            mark = "*" if c[method]["gaussian_shaped"] and not c.get("gaussian_truth") else ""
            lo, hi = a["ci95"]
            rates.append(f"{a['count']}/{reps}{mark} [{lo:.3f}, {hi:.3f}]")
        blocks = ",".join(str(g["block"]) for g in group)
        lines.append(
            f"| {name} | {c['m']:,} | {c['truth']:.3g} | {blocks} | {hull:.1f} | "
            + " | ".join(rates)
            + " |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=["null", "gaussian", "rr", "laws", "table"], required=True
    )
    parser.add_argument("--m", type=int, nargs="+", default=[1000])
    parser.add_argument("--eps", type=float, nargs="+", default=[2.0, 4.0, 8.0])
    parser.add_argument("--laws", nargs="+", choices=PANEL_LAWS, default=list(PANEL_LAWS))
    parser.add_argument("--nulls", nargs="+", choices=["normal", "rounded"], default=None)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--block", type=int, default=0, help="replications block·R … (block+1)·R−1")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.part == "table":
        print(table(json.loads(args.out.read_text())))
        return 0
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    command = f"PYTHONPATH=. python benchmarks/calibration/canaries_peer_validity.py {argv_text}"
    print(command, flush=True)
    start = time.perf_counter()
    R, b = args.reps, args.block
    for m in args.m:
        cells = []
        if args.part == "null":
            draws = {"normal": _null_normal, "rounded": _null_rounded}
            for law in args.nulls or draws:
                draw = lambda r, f=draws[law], m=m: f(r, m)  # noqa: E731
                c = cell("null", m, R, b, draw, 0.0, mu=0.0)
                cells.append(c | {"law": law, "gaussian_truth": True})
                print(_line(cells[-1]), flush=True)
        elif args.part == "gaussian":
            for eps in args.eps:
                mu = _mu(eps)
                seed = [3, m, int(100 * eps)]  # canaries.py validity_cells' Gaussian
                draw = lambda r, s=seed, mu=mu, m=m: _gaussian([*s, r], m, mu)  # noqa: E731
                c = cell("gaussian", m, R, b, draw, eps, mu=mu)
                cells.append(c | {"eps": eps, "mu": mu, "gaussian_truth": True})
                print(_line(cells[-1]), flush=True)
        elif args.part == "rr":
            for eps in args.eps:
                draw = lambda r, eps=eps, m=m: _rr(eps, r, m)  # noqa: E731
                cells.append(cell("rr", m, R, b, draw, eps) | {"eps": eps})
                print(_line(cells[-1]), flush=True)
        else:
            for law in args.laws:
                truth = true_epsilon(law)
                draw = lambda r, law=law, m=m: _law(  # noqa: E731
                    law, np.random.default_rng([7, m, LAWS.index(law), r]), m
                )
                mu = MU4 if law == "gauss" else None
                c = cell("law", m, R, b, draw, truth, mu=mu)
                cells.append(c | {"law": law, "gaussian_truth": law == "gauss"})
                print(_line(cells[-1]), flush=True)
        _merge(cells, command, args.out)
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
