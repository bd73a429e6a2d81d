"""2-D outputs through the per-axis pilot quantile map: coverage and tightness against the oracle.

    python benchmarks/calibrate_multid_map.py [--reps 200] [--n 1e4 1e5] [--laws ...] [--out FILE]
    python benchmarks/calibrate_multid_map.py --table benchmarks/results/calibrate_multid_map.json

``transform="auto"`` maps 1-D outputs only; this study measures what ``transform="quantile"``
(a map per axis, fitted on the pilot rows) does to 2-D outputs, against the outputs' own KDE
(``transform=None``, what ``lower_bound`` does in 2-D today), both on the same draws. The laws
have independent, identically distributed axes, each shifted by the same amount (P = law of
X + shift·(1, 1), Q = law of X), so that ∫ p^a q^b factorizes into the d-th power of the 1-D
integral: the exact D_λ is d times the 1-D one and the oracle deficit ``−Φ⁻¹(α/3) σ*/√n``
(σ*² of eq. (18) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, at the true densities) comes
from the same 1-D quadratures as ``calibrate_offzoo.py``'s. The Gaussian with shift 0.2 a side
is issue 22's 2-D cell (σ = 1, shift (0.2, 0.2)). λ = 2, 5, 7, α = 0.05, simultaneous. Writes
``benchmarks/results/calibrate_multid_map.json`` unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _summary import summarize, table_cells, write_study  # noqa: E402
from calibrate_offzoo import ALPHA, LAWS, ORDERS, Law, _integral  # noqa: E402

import rdpjax  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
DIM = 2
MULTID_LAWS = {
    "gaussian": Law("gaussian", stats.norm.logpdf, lambda r, n: r.standard_normal(n), 0.2),
    "laplace": LAWS["laplace"],  # b = 1, shift 0.5 a side
    "student_t3": LAWS["student_t3"],  # shift 0.5 a side
}
TRANSFORMS = (None, "quantile")


def exact_and_oracle(law: Law, n: int, d: int = DIM) -> tuple[np.ndarray, np.ndarray]:
    """D_λ and the oracle deficit for d i.i.d. axes: every integral is the 1-D one to the d."""
    z = -special.ndtri(ALPHA / len(ORDERS))
    exact, oracle = [], []
    for lam in ORDERS:
        i = _integral(law, lam, 1 - lam) ** d
        j1 = _integral(law, 2 * lam - 1, 2 - 2 * lam) ** d
        j2 = _integral(law, 2 * lam, 1 - 2 * lam) ** d
        var_p = (lam / (lam - 1)) ** 2 * (j1 / i**2 - 1)
        var_q = j2 / i**2 - 1
        exact.append(np.log(i) / (lam - 1))
        oracle.append(z * np.sqrt((var_p + var_q) / n))
    return np.array(exact), np.array(oracle)


def run_cell(name: str, n: int, reps: int, seed: int) -> dict:
    law = MULTID_LAWS[name]
    exact, oracle = exact_and_oracle(law, n)
    out = {"law": name, "shift": law.shift, "n": n, "reps": reps, "exact": exact.tolist()}
    out["oracle_deficit"] = oracle.tolist()
    for transform in TRANSFORMS:
        rng = np.random.default_rng([seed, list(MULTID_LAWS).index(name), n])  # same draws
        lower = np.empty((reps, len(ORDERS)))
        grids = set()
        start = time.perf_counter()
        for r in range(reps):
            p = law.draw(rng, n * DIM).reshape(n, DIM) + law.shift
            q = law.draw(rng, n * DIM).reshape(n, DIM)
            b = rdpjax.lower_bound(p, q, ORDERS, alpha=ALPHA, discrete=False, transform=transform)
            lower[r] = b.lower
            grids.add(b.grid_shape)
        out[str(transform)] = summarize(lower, exact, oracle) | {
            "grids": sorted(" × ".join(map(str, g)) for g in grids),
            "seconds": time.perf_counter() - start,
        }
    return out


def format_table(cells: list[dict]) -> str:
    """Markdown: one row per cell and transform."""
    lines = [
        "| law (2-D) | n | transform | simultaneous | lower/exact | deficit/oracle | grid | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        for t in ("None", "quantile"):
            e = c[t]
            lines.append(
                f"| {c['law'].replace('_', ' ')}, shift {c['shift']} a side | {c['n']:,} | "
                f"{t.lower()} | {table_cells(e)} | {e['grids'][-1]} | {e['seconds']:.0f} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, nargs="+", default=[1e4, 1e5])
    parser.add_argument("--laws", nargs="+", choices=list(MULTID_LAWS), default=list(MULTID_LAWS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "calibrate_multid_map.json")
    parser.add_argument("--table", type=Path, help="only print the markdown table of this JSON")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(format_table(json.loads(args.table.read_text())["cells"]))
        return 0
    cells = []
    for name in args.laws:
        for n in (int(v) for v in args.n):
            cell = run_cell(name, n, args.reps, args.seed)
            cells.append(cell)
            print("\n".join(format_table([cell]).splitlines()[-2:]), flush=True)
    command = "python benchmarks/calibrate_multid_map.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    write_study(args.out, command, ORDERS, ALPHA, cells, format_table(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
