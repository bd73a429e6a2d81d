"""Known shapes of DP bugs, each with its correct twin: the smallest n of a size grid at which
``rdpjax.audit`` refutes the claim, for one seed.

    python benchmarks/catalog/bugs.py [--sizes 1e2 1e3 1e4 1e5] [--seed 0] [--out FILE]

The shapes, their claims, exact ε(λ) and citations live in
``benchmarks/catalog/libraries/cases_bugs.py``
(the catalog, ``benchmarks/catalog/libraries/catalog.py``, audits each at a fixed n over 20 seeds;
this
script scans n for one seed): ``gaussian_sigma`` (σ/√2 used, σ claimed: ε(λ) twice the claim),
``double_spending`` (two releases charged as one: twice), ``zero_sensitivity`` (a sensitivity
B − B = 0: disjoint outputs, ε(λ) = ∞), ``clip_after_sum`` (an unclipped record of 8 with
sensitivity 1 claimed: 64 times), ``noise_on_sum_scaled_for_mean`` (the mean's noise σ/B on the
sum, B = 10: 100 times). Each bug and its twin are audited at each n (outputs per database, the
claim's order grid, both directions, α = 0.05, the case's own audit options).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax
import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402

import rdpjax  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "catalog"
sys.path.insert(0, str(Path(__file__).resolve().parent / "libraries"))

import cases_bugs  # noqa: E402


def shapes() -> dict:
    """``{name: (bug, twin)}``: the synthetic shapes of the catalog, as ``case.Case`` pairs."""
    cases = {c.name: c for c in cases_bugs.cases() if c.library == "synthetic"}
    return {c.name: (c, cases[c.twin]) for c in cases.values() if c.kind == "bug"}


def first_refutation(case, sizes, key):
    """The first n of ``sizes`` whose audit of ``case`` refutes its claim (``None``), and the
    last report."""
    for n in sizes:
        report = rdpjax.audit(
            key,
            case.mechanism,
            case.x,
            case.x_prime,
            n=n,
            claim=case.claim,
            progress=False,
            **case.options,
        )
        if report.is_refuted:
            return n, report
    return None, report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e2, 1e3, 1e4, 1e5])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "bugs.json")
    args = parser.parse_args(argv)
    rdpjax.enable_compilation_cache()
    sizes = [int(v) for v in args.sizes]
    rows = []
    for i, (name, (bug, twin)) in enumerate(shapes().items()):
        key = jax.random.key(args.seed * 1000 + i)
        n_bug, report = first_refutation(bug, sizes, key)
        n_twin, _ = first_refutation(twin, sizes, key)
        worst = int(np.argmax(np.asarray(report.lower) - np.asarray(report.claimed)))
        lam = float(report.lam[worst])
        rows.append(
            {
                "case": name,
                "claim": str(bug.claim),
                "exact_at_lam": float(bug.exact([lam])[0]),
                "lam": lam,
                "refuted_at_n": n_bug,
                "lower_at_lam": float(report.lower[worst]),
                "claimed_at_lam": float(report.claimed[worst]),
                "twin_refuted_at_n": n_twin,
            }
        )
        r = rows[-1]
        print(
            f"{name:30s} claim {r['claim']:24s} refuted at n = {n_bug or '—'!s:>7}  "
            f"(λ = {lam:g}: lower {r['lower_at_lam']:.3f}, claimed {r['claimed_at_lam']:.3f}, "
            f"exact {r['exact_at_lam']:.3f})  twin refuted: {n_twin or 'never'}",
            flush=True,
        )
    meta = {
        "command": f"python benchmarks/catalog/bugs.py --sizes {' '.join(map(str, sizes))} "
        f"--seed {args.seed}",
    }
    write_json(args.out, meta, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
