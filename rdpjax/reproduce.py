"""Reproduce the experiments of paper 000 §V: seven mechanisms on pair (21) at λ = 2, 5, 7.

For each mechanism: one audit at ``n`` outputs per database (the estimate and the lower bound,
simultaneous over the three orders), and a coverage study of ``reps`` vmapped replications at
``coverage_n`` outputs per database (the fraction of replications whose bound held). The exact
values are the closed forms of methods.md §3 (the zoo's ``divergence``).

Used by ``rdpjax reproduce`` and ``benchmarks/paper_000.py``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import jax

from rdpjax import mechanisms as m
from rdpjax.audit import audit
from rdpjax.databases import paper_pair
from rdpjax.studies import coverage

__all__ = ["EXPERIMENTS", "ORDERS", "reproduce", "write_results"]

ORDERS = (2.0, 5.0, 7.0)

EXPERIMENTS = {
    "Laplace": lambda: m.Laplace(5.0),
    "Gaussian": lambda: m.Gaussian(5.0),
    "Subsampled Laplace": lambda: m.PoissonSubsampled(m.Laplace(5.0), 0.5),
    "Subsampled Gaussian": lambda: m.PoissonSubsampled(m.Gaussian(5.0), 0.5),
    "Randomized response": lambda: m.RandomizedResponse(1.5),
    "Shuffled RR": lambda: m.ShuffledRandomizedResponse(1.5),
    "Noisy GD": lambda: m.NoisyGradientDescent(0.2, 1.0, 10),
}
"""The seven experiments of paper 000 §V with the paper's parameters."""


def reproduce(
    *,
    n: int = 10**7,
    reps: int = 200,
    coverage_n: int = 10**5,
    seed: int = 0,
    alpha: float = 0.05,
    names: list[str] | None = None,
    progress: bool = True,
) -> list[dict]:
    """Run the experiments; return one row per (mechanism, λ).

    Row keys: mechanism, lam, exact, estimate, lower, std_error, lower_over_exact, n, coverage,
    coverage_low, coverage_high, coverage_n, reps.
    """
    x, x_prime = paper_pair()
    key = jax.random.key(seed)
    rows = []
    for i, name in enumerate(names or list(EXPERIMENTS)):
        mech = EXPERIMENTS[name]()
        t0 = time.perf_counter()
        if progress:
            print(
                f"[{i + 1}/{len(names or EXPERIMENTS)}] {name}: audit at n = {n:,}",
                end="",
                file=sys.stderr,
                flush=True,
            )
        k_audit, k_cov = jax.random.split(jax.random.fold_in(key, i))
        report = audit(
            mech, x, x_prime, ORDERS, n=n, key=k_audit, alpha=alpha, both_directions=False
        )
        if progress:
            print(f"; coverage, {reps} × n = {coverage_n:,}", end="", file=sys.stderr, flush=True)
        cov = coverage(mech, x, x_prime, ORDERS, n=coverage_n, reps=reps, key=k_cov, alpha=alpha)
        if progress:
            print(f" [{time.perf_counter() - t0:.0f} s]", file=sys.stderr, flush=True)
        for j, lam in enumerate(ORDERS):
            exact = float(report.exact[j])
            rows.append(
                {
                    "mechanism": name,
                    "lam": lam,
                    "exact": exact,
                    "estimate": float(report.estimate[j]),
                    "lower": float(report.lower[j]),
                    "std_error": float(report.std_error[j]),
                    "lower_over_exact": float(report.lower[j]) / exact,
                    "n": n,
                    "coverage": float(cov.coverage[j]),
                    "coverage_low": float(cov.coverage_low[j]),
                    "coverage_high": float(cov.coverage_high[j]),
                    "coverage_n": coverage_n,
                    "reps": reps,
                }
            )
    return rows


def format_table(rows: list[dict]) -> str:
    """Markdown table: mechanism, λ, exact, estimate, lower, lower/exact, coverage."""
    lines = [
        "| mechanism | λ | exact | estimate | lower | lower/exact | coverage (95% CI) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['mechanism']} | {r['lam']:g} | {r['exact']:.6f} | {r['estimate']:.6f} | "
            f"{r['lower']:.6f} | {r['lower_over_exact']:.3f} | {r['coverage']:.3f} "
            f"[{r['coverage_low']:.3f}, {r['coverage_high']:.3f}] |"
        )
    return "\n".join(lines)


def write_results(rows: list[dict], out: Path, meta: dict) -> None:
    """Write ``results.json`` and ``results.md`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    r0 = rows[0]
    header = (
        f"# Paper 000 §V reproduced\n\nBounds from n = {r0['n']:,} outputs per database "
        f"(simultaneous over λ = 2, 5, 7 at {1 - meta['alpha']:.0%}); coverage of the bound over "
        f"{r0['reps']} replications at n = {r0['coverage_n']:,}.\n\n"
        f"Command: `{meta['command']}`\n\n"
    )
    (out / "results.md").write_text(header + format_table(rows) + "\n")
