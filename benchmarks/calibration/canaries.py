"""One-run canary audits: validity of rdpjax.canaries, and power beside jax_privacy's auditor.

    PYTHONPATH=. python benchmarks/calibration/canaries.py --part power|validity|pld \
        [--m 1000 10000] [--eps 2 4 8] [--reps R]

(``PYTHONPATH=.``: the checkout's rdpjax.) Merges its cells into
``benchmarks/results/calibration/canaries.json`` (so parts and sizes can be run separately) and
prints a table. The idealized one-run Gaussian: m canaries, inclusion bits b_i ~ Bernoulli(½), score
``N(μ b_i, 1)`` with μ = 1/σ for the σ at which the Gaussian mechanism is (ε, 10⁻⁵)-DP
(dp_accounting.get_sigma_gaussian), so the truth is ε at δ = 10⁻⁵, μ-GDP and μ²/2-zCDP.

* **power** (R = 30 by default): on the *same* scores, rdpjax's ``one_run_bits`` (``epsilon``:
  any (ε, δ)-DP mechanism; ``epsilon_gaussian``: the ε(δ) of the certified μ) and
  ``jax_privacy.auditing.CanaryScoreAuditor(in, out)``'s ``epsilon_one_run`` and
  ``epsilon_one_run_fdp`` (significance 0.05, δ = 10⁻⁵, its default Bonferroni over the
  thresholds on its ROC hull, a set chosen with the bits: canaries_peer_validity.py).
* **validity** (R = 200 by default), α = 0.05, with exact 95% intervals on each rate:
  null canaries (one law for in and out: ε = 0 and μ = 0 expected, the claim ``pure_dp(0)`` is
  true); the Gaussian above with the true claims ``approx_dp(ε, 1e-5)``, ``gdp(μ)``,
  ``zcdp(μ²/2)`` (dp_accounting claims: the pld part); the Laplace mechanism (score
  ``b_i + Laplace(1/ε)``, ε-DP) with ``pure_dp(ε)``.
* **ties** (R = 200 by default), α = 0.05: the same rates on integer scores, where the random
  tie-break decides the guesses (:func:`tied_cells`).
* **leaky** (``--reps 1000`` in the docs), α = 0.05: randomized response (the law at which
  Steinke's tests are tight) with each bit revealed with probability 2·10⁻⁵, the true claims
  ``approx_dp(ε, 2e-5)`` and, without the leaks, ``pure_dp(ε)`` (:func:`leaky_cells`).
* **pld** (R = 200 by default): claims of kind ``dp_accounting`` on the same Gaussian scores,
  ``from_dp_accounting(GaussianDpEvent(σ'))``: the true one (σ' = σ: the share of
  replications that keep it) and three too small ones (μ' = 1/σ' = 0.36μ, 0.4μ, 0.44μ, about
  where the certified μ falls at m = 10³), each refuted through its PLD curve (what
  ``one_run`` does), through its RDP curve (the same curve as an ``rdp`` claim) and through
  the exact curve of ``gdp(μ')`` (the reference: a PLD curve can at best equal it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import dp_accounting
import numpy as np
from scipy import stats

import rdpjax
from rdpjax.canaries import one_run_bits
from rdpjax.claims import approx_dp, from_dp_accounting, gdp, pure_dp, rdp, zcdp

ALPHA = 0.05
DELTA = 1e-5
OUT = Path(__file__).resolve().parents[1] / "results" / "calibration" / "canaries.json"


def _rate(hits: int, reps: int) -> dict:
    ci = stats.binomtest(int(hits), reps).proportion_ci(0.95, method="exact")
    return {"count": int(hits), "reps": reps, "rate": hits / reps, "ci95": [ci.low, ci.high]}


def _gaussian(seed: list[int], m: int, mu: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, m)
    return rng.normal(mu * bits, 1.0), bits


def _mu(eps: float) -> float:
    return 1.0 / dp_accounting.get_sigma_gaussian(eps, DELTA)


def power_cell(eps: float, m: int, reps: int) -> dict:
    """Ours and jax_privacy's bounds on the same idealized Gaussian scores."""
    from jax_privacy.auditing import CanaryScoreAuditor

    mu = _mu(eps)
    rows, t_ours, t_jax, fdp_larger = [], 0.0, 0.0, 0
    for r in range(reps):
        scores, bits = _gaussian([1, m, int(100 * eps), r], m, mu)
        t = time.perf_counter()
        ours = one_run_bits(scores, bits, delta=DELTA, alpha=ALPHA)
        t_ours += time.perf_counter() - t
        auditor = CanaryScoreAuditor(scores[bits == 1], scores[bits == 0])
        t = time.perf_counter()
        steinke = auditor.epsilon_one_run(ALPHA, DELTA)
        fdp = auditor.epsilon_one_run_fdp(ALPHA, DELTA)
        t_jax += time.perf_counter() - t
        rows.append([ours.epsilon, ours.epsilon_gaussian, ours.mu, steinke, fdp])
        fdp_larger += ours.epsilon_fdp >= ours.epsilon_steinke
    x = np.array(rows)
    mean = x.mean(axis=0)
    return {
        "eps": eps,
        "m": m,
        "mu": mu,
        "reps": reps,
        "ours_epsilon": mean[0],
        "ours_epsilon_gaussian": mean[1],
        "ours_mu": mean[2],
        "jax_epsilon_one_run": mean[3],
        "jax_epsilon_one_run_fdp": mean[4],
        "ratio_epsilon": mean[0] / mean[3] if mean[3] > 0 else None,
        "ratio_gaussian": mean[1] / mean[4] if mean[4] > 0 else None,
        "median": {"ours": np.median(x[:, :2], 0).tolist(), "jax": np.median(x[:, 3:], 0).tolist()},
        "share_ours_at_least": [
            float(np.mean(x[:, 0] >= x[:, 3])),
            float(np.mean(x[:, 1] >= x[:, 4])),
        ],
        "seconds_per_rep": {"ours": t_ours / reps, "jax": t_jax / reps},
        "share_fdp_bound_larger": fdp_larger / reps,
    }


def validity_cells(
    eps_list: list[float], m: int, reps: int, null_cell: bool, gaussian: bool = True
) -> list[dict]:
    """Rates of bounds above the truth and of true claims refuted (``gaussian``: its cells)."""
    cells = []
    null = {"epsilon_zero": 0, "mu_zero": 0, "pure_dp_0_kept": 0}
    for r in range(reps if null_cell else 0):
        scores, bits = _gaussian([2, m, r], m, 0.0)
        res = one_run_bits(scores, bits, pure_dp(0.0), delta=DELTA, alpha=ALPHA)
        null["epsilon_zero"] += res.epsilon == 0.0
        null["mu_zero"] += res.mu == 0.0
        null["pure_dp_0_kept"] += not res.refuted
    if null_cell:
        cells.append({"cell": "null", "m": m, **{k: _rate(v, reps) for k, v in null.items()}})
    for eps in eps_list:
        mu = _mu(eps)
        claims = {"approx_dp": approx_dp(eps, DELTA), "gdp": gdp(mu), "zcdp": zcdp(mu**2 / 2)}
        hits = {"epsilon_below": 0, "epsilon_gaussian_below": 0, "mu_below": 0}
        hits |= {f"{k}_kept": 0 for k in claims}
        for r in range(reps if gaussian else 0):
            scores, bits = _gaussian([3, m, int(100 * eps), r], m, mu)
            for kind, claim in claims.items():
                res = one_run_bits(scores, bits, claim, delta=DELTA, alpha=ALPHA)
                hits[f"{kind}_kept"] += not res.refuted
                if kind == "approx_dp":
                    hits["epsilon_below"] += res.epsilon <= eps
                    hits["epsilon_gaussian_below"] += res.epsilon_gaussian <= eps
                    hits["mu_below"] += res.mu <= mu
        if gaussian:
            cells.append(
                {"cell": "gaussian", "eps": eps, "mu": mu, "m": m}
                | {k: _rate(v, reps) for k, v in hits.items()}
            )
        lap = {"epsilon_below": 0, "pure_dp_kept": 0}
        for r in range(reps):
            rng = np.random.default_rng([4, m, int(100 * eps), r])
            bits = rng.integers(0, 2, m)
            scores = bits + rng.laplace(0.0, 1.0 / eps, m)  # ε-DP in each bit
            res = one_run_bits(scores, bits, pure_dp(eps), alpha=ALPHA)  # δ = 0
            lap["epsilon_below"] += res.epsilon <= eps
            lap["pure_dp_kept"] += not res.refuted
        cells.append(
            {"cell": "laplace", "eps": eps, "m": m} | {k: _rate(v, reps) for k, v in lap.items()}
        )
        print(json.dumps(cells[-2:], default=float)[:600], flush=True)
    return cells


def tied_cells(eps_list: list[float], m: int, reps: int) -> list[dict]:
    """Validity on integer scores (ties in every group, the random tie-break at work).

    ``null_rounded``: round(N(0, 1)) for in and out alike (truth ε = 0, μ = 0); ``rounded``:
    round(N(μ b, 1)), a post-processing of the Gaussian mechanism, so (ε, 10⁻⁵)-DP and μ-GDP;
    ``discrete_laplace``: b + G₁ − G₂ with G₁, G₂ ~ Geometric(1 − e^{−ε}) (the discrete Laplace
    law of parameter e^{−ε}, sensitivity 1: ε-DP), its ε bound taken at δ = 0.
    """
    cells = []
    null = {"epsilon_zero": 0, "mu_zero": 0, "pure_dp_0_kept": 0}
    for r in range(reps):
        rng = np.random.default_rng([6, m, r])
        bits = rng.integers(0, 2, m)
        res = one_run_bits(np.round(rng.normal(0, 1, m)), bits, pure_dp(0.0), alpha=ALPHA)
        null["epsilon_zero"] += res.epsilon == 0.0
        null["mu_zero"] += res.mu == 0.0
        null["pure_dp_0_kept"] += not res.refuted
    cells.append({"cell": "null_rounded", "m": m} | {k: _rate(v, reps) for k, v in null.items()})
    for eps in eps_list:
        mu = _mu(eps)
        hits = {"epsilon_below": 0, "mu_below": 0, "approx_dp_kept": 0}
        lap = {"epsilon_below": 0, "pure_dp_kept": 0}
        for r in range(reps):
            rng = np.random.default_rng([7, m, int(100 * eps), r])
            bits = rng.integers(0, 2, m)
            scores = np.round(rng.normal(mu * bits, 1.0))
            res = one_run_bits(scores, bits, approx_dp(eps, DELTA), alpha=ALPHA)
            hits["epsilon_below"] += res.epsilon <= eps
            hits["mu_below"] += res.mu <= mu
            hits["approx_dp_kept"] += not res.refuted
            p = -np.expm1(-eps)  # Geometric(p) − Geometric(p): discrete Laplace, e^{−ε}
            scores = bits + rng.geometric(p, m) - rng.geometric(p, m)
            res = one_run_bits(scores.astype(float), bits, pure_dp(eps), alpha=ALPHA)
            lap["epsilon_below"] += res.epsilon <= eps
            lap["pure_dp_kept"] += not res.refuted
        cells.append(
            {"cell": "rounded", "eps": eps, "mu": mu, "m": m}
            | {k: _rate(v, reps) for k, v in hits.items()}
        )
        cells.append(
            {"cell": "discrete_laplace", "eps": eps, "m": m}
            | {k: _rate(v, reps) for k, v in lap.items()}
        )
        print(json.dumps(cells[-2:], default=float)[:600], flush=True)
    return cells


PLD_FRACTIONS = (0.36, 0.4, 0.44)
"""μ'/μ of the too-small dp_accounting claims of the pld part."""


def pld_cells(eps_list: list[float], m: int, reps: int) -> list[dict]:
    """Refutation rates of dp_accounting claims through their PLD, their RDP and exact curves."""
    cells = []
    for eps in eps_list:
        mu = _mu(eps)
        true_claim = from_dp_accounting(dp_accounting.GaussianDpEvent(1.0 / mu))
        false = {}
        for frac in PLD_FRACTIONS:
            claim = from_dp_accounting(dp_accounting.GaussianDpEvent(1.0 / (frac * mu)))
            via_rdp = rdp(lambda lam, c=claim: c(lam))  # the same RDP curve, CKS Prop. 12
            false[frac] = {"pld": claim, "rdp": via_rdp, "exact": gdp(frac * mu)}
        hits = {"true_kept_pld": 0} | {
            f"refuted_{frac:g}_{route}": 0 for frac in PLD_FRACTIONS for route in false[frac]
        }
        start = time.perf_counter()
        for r in range(reps):
            scores, bits = _gaussian([5, m, int(100 * eps), r], m, mu)
            hits["true_kept_pld"] += not one_run_bits(scores, bits, true_claim, alpha=ALPHA).refuted
            for frac, routes in false.items():
                for route, claim in routes.items():
                    res = one_run_bits(scores, bits, claim, alpha=ALPHA)
                    hits[f"refuted_{frac:g}_{route}"] += res.refuted
        cells.append(
            {"cell": "gaussian", "eps": eps, "mu": mu, "m": m, "fractions": list(PLD_FRACTIONS)}
            | {k: _rate(v, reps) for k, v in hits.items()}
            | {"seconds": time.perf_counter() - start}
        )
        print(json.dumps(cells[-1], default=float)[:900], flush=True)
    return cells


LEAK = 2e-5
"""δ of the leaky randomized response: m·δ = 0.02 at m = 10³, where the joint test is used."""


def leaky_cells(eps_list: list[float], m: int, reps: int) -> list[dict]:
    """Randomized response, the ε-DP law at which Steinke's tests are tight, with a leak.

    Each canary's score is its bit revealed with probability ``LEAK`` (score ±10), else its bit
    kept with probability e^ε/(1 + e^ε) and flipped otherwise (score 1 or 0): (ε, ``LEAK``)-DP
    in each bit. Every guess among the tied scores is right with probability exactly q, so the
    joint Steinke test's level is reached: the rate of true claims refuted is its real level.
    Every score ties with half the others, so each replication draws its own tie-break key
    (the guarantee of :func:`rdpjax.canaries.guesses.tie_order` is over the key's draw; one
    fixed key for all replications gave 0.4–0.9% refuted, the fixed order being a function of
    the group sizes).
    """
    import jax

    cells = []
    for eps in eps_list:
        q = 1.0 / (1.0 + np.exp(-eps))
        hits = {"approx_dp_kept": 0, "pure_dp_kept": 0, "epsilon_below": 0}
        for r in range(reps):
            rng = np.random.default_rng([8, m, int(100 * eps), r])
            bits = rng.integers(0, 2, m)
            shown = np.where(rng.random(m) < q, bits, 1 - bits).astype(float)
            scores = np.where(rng.random(m) < LEAK, 20.0 * bits - 10.0, shown)
            key = jax.random.key(r)  # the tie-break's guarantee is over its key: one per run
            res = one_run_bits(scores, bits, approx_dp(eps, LEAK), alpha=ALPHA, key=key)
            hits["approx_dp_kept"] += not res.refuted
            hits["epsilon_below"] += res.epsilon <= eps
            plain = np.where(np.abs(scores) == 10.0, (scores > 0).astype(float), scores)
            res = one_run_bits(plain, bits, pure_dp(eps), alpha=ALPHA, key=key)
            hits["pure_dp_kept"] += not res.refuted
        cells.append(
            {"cell": "leaky_rr", "eps": eps, "m": m, "delta": LEAK}
            | {k: _rate(v, reps) for k, v in hits.items()}
        )
        print(json.dumps(cells[-1], default=float)[:600], flush=True)
    return cells


def _merge(part: str, cells: list[dict], command: str, out: Path) -> dict:
    old = json.loads(out.read_text()) if out.exists() else {}
    keep = [c for c in old.get(part, []) if not any(_same(c, n) for n in cells)]
    old[part] = keep + cells
    commands = old.setdefault("commands", {}).get(part, [])
    old["commands"][part] = commands + [command] * (command not in commands)
    old["rdpjax"] = str(Path(rdpjax.__file__).parent)
    out.write_text(json.dumps(old, indent=1, default=float) + "\n")
    return old


def _same(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in ("cell", "eps", "m"))


def tables(result: dict) -> str:
    """The validity and power tables of docs/canaries.md, in markdown, from the JSON."""
    lines = [
        "| cell | m | ε | bound ≤ truth: ε | ε_gauss | μ | true claims kept |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in sorted(result.get("validity", []), key=lambda c: (c["cell"], c["m"], c.get("eps", 0))):
        rate = lambda key, c=c: f"{c[key]['rate']:.3f}" if key in c else "–"  # noqa: E731
        if c["cell"] == "null":
            row = [
                "null",
                rate("epsilon_zero"),
                "–",
                rate("mu_zero"),
                f"pure_dp(0) {rate('pure_dp_0_kept')}",
            ]
        elif c["cell"] == "gaussian":
            kept = ", ".join(f"{k} {rate(k + '_kept')}" for k in ("approx_dp", "gdp", "zcdp"))
            row = [
                "gaussian",
                rate("epsilon_below"),
                rate("epsilon_gaussian_below"),
                rate("mu_below"),
                kept,
            ]
        else:
            row = ["laplace", rate("epsilon_below"), "–", "–", f"pure_dp {rate('pure_dp_kept')}"]
        eps = f"{c['eps']:g}" if "eps" in c else "0"
        lines.append(f"| {row[0]} | {c['m']:,} | {eps} | " + " | ".join(row[1:]) + " |")
    lines += [
        "",
        "| true ε | m | rdpjax ε | jax Steinke | ratio | rdpjax ε(μ̂) | jax f-DP | ratio "
        "| μ̂ (true μ) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in sorted(result.get("power", []), key=lambda c: (c["eps"], c["m"])):
        lines.append(
            f"| {c['eps']:g} | {c['m']:,} | {c['ours_epsilon']:.2f} "
            f"| {c['jax_epsilon_one_run']:.2f} | {c['ratio_epsilon']:.2f}× "
            f"| {c['ours_epsilon_gaussian']:.2f} "
            f"| {c['jax_epsilon_one_run_fdp']:.2f} | {c['ratio_gaussian']:.2f}× "
            f"| {c['ours_mu']:.2f} ({c['mu']:.2f}) |"
        )
    lines += [
        "",
        "| true ε | m | true claim kept (PLD) | μ'/μ | refuted: PLD | RDP | exact G_μ' |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in sorted(result.get("pld", []), key=lambda c: (c["m"], c["eps"])):
        for frac in c["fractions"]:
            rates = [c[f"refuted_{frac:g}_{route}"]["rate"] for route in ("pld", "rdp", "exact")]
            lines.append(
                f"| {c['eps']:g} | {c['m']:,} | {c['true_kept_pld']['rate']:.3f} | {frac:g} | "
                + " | ".join(f"{x:.3f}" for x in rates)
                + " |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=["power", "validity", "ties", "leaky", "pld", "tables"], required=True
    )
    parser.add_argument("--m", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--eps", type=float, nargs="*", default=[2.0, 4.0, 8.0])
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--no-null", action="store_true", help="validity: skip the null cell")
    parser.add_argument(
        "--no-gaussian", action="store_true", help="validity: skip the Gaussian cells"
    )
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON file cells merge into")
    args = parser.parse_args(argv)
    if args.part == "tables":
        print(tables(json.loads(args.out.read_text())))
        return 0
    reps = args.reps or (30 if args.part == "power" else 200)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    command = f"PYTHONPATH=. python benchmarks/calibration/canaries.py {argv_text}"
    print(command, flush=True)
    start = time.perf_counter()
    cells = []
    for m in args.m:
        if args.part == "power":
            for eps in args.eps:
                cell = power_cell(eps, m, reps)
                cells.append(cell)
                c = cell
                print(
                    f"ε={eps:g} m={m}: ours ε {c['ours_epsilon']:.3f} (×{c['ratio_epsilon']:.2f} "
                    f"jax Steinke {c['jax_epsilon_one_run']:.3f}), Gaussian-shaped "
                    f"{c['ours_epsilon_gaussian']:.3f} (×{c['ratio_gaussian']:.2f} jax f-DP "
                    f"{c['jax_epsilon_one_run_fdp']:.3f}); μ {c['ours_mu']:.3f} of {c['mu']:.3f}",
                    flush=True,
                )
        elif args.part == "pld":
            cells += pld_cells(args.eps, m, reps)
        elif args.part == "ties":
            cells += tied_cells(args.eps, m, reps)
        elif args.part == "leaky":
            cells += leaky_cells(args.eps, m, reps)
        else:
            cells += validity_cells(args.eps, m, reps, not args.no_null, not args.no_gaussian)
    _merge(args.part, cells, command, args.out)
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
