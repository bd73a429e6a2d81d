"""2-D and 3-D outputs through the per-axis pilot quantile map: coverage and tightness.

    python benchmarks/calibration/calibrate_multid_map.py [--reps 200] [--n 1e3 1e4 1e5] [--laws
        ...]
        [--out FILE] [--resume]
    python benchmarks/calibration/calibrate_multid_map.py --table
        benchmarks/results/calibration/calibrate_multid_map.json

This study measures what ``transform="quantile"`` (a map per axis, fitted on the pilot rows)
does to 2-D and 3-D outputs, against the outputs' own KDE (``transform=None``), both on the same
draws, and counts how many of the draws ``transform="auto"`` maps
(:func:`rdpjax.estimator.transform.auto_transform`). Each law is ``P = A(X + s)``, ``Q = A X``
with X of independent axes, s a shift per axis and A an invertible matrix (the identity but for
the correlated Gaussian). A is a bijection of the outputs, so D_λ and σ*² (eq. (18) of Kutta,
Askin, Dunsche, arXiv:2212.04739v3, at the true densities) are those of ``X + s`` against X,
whose integrals ∫ p^a q^b are products of the axes' 1-D quadratures
(``calibrate_offzoo.exact_and_oracle``); the oracle deficit is ``−Φ⁻¹(α/3) σ*/√n``. The
Gaussian with shift 0.2 a side is issue 22's 2-D cell (σ = 1, shift (0.2, 0.2)). λ = 2, 5, 7,
α = 0.05, simultaneous. Writes ``benchmarks/results/calibration/calibrate_multid_map.json`` unless
``--out`` says otherwise, after every cell (``meta.complete`` is false until the last);
``--resume`` keeps the cells that file already holds (same reps and seed, run by the same code:
the flag cannot check that) and runs the rest.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import summarize, table_cells, write_json  # noqa: E402
from calibrate_offzoo import ALPHA, LAWS, ORDERS, Law, exact_and_oracle  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax.estimator.transform import auto_transform  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"


@dataclasses.dataclass(frozen=True)
class Cell:
    """``P = A(X + s)``, ``Q = A X``: ``axes`` the laws of X's independent axes, shifts s."""

    label: str
    axes: tuple[Law, ...]
    mix: tuple[tuple[float, ...], ...] | None = None  # A (None: the identity)

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` rows of P and of Q."""
        x_p = np.column_stack([axis.draw(rng, n) + axis.shift for axis in self.axes])
        x_q = np.column_stack([axis.draw(rng, n) for axis in self.axes])
        if self.mix is None:
            return x_p, x_q
        a = np.asarray(self.mix)
        return x_p @ a.T, x_q @ a.T


def _shifted(name: str, shift: float) -> Law:
    return dataclasses.replace(LAWS[name], shift=shift)


_UNIFORM = Law(  # the same law under P and Q: an axis that carries no leak
    "uniform", stats.uniform(-1.0, 2.0).logpdf, lambda r, n: r.uniform(-1.0, 1.0, n), 0.0,
    points=(-1.0, 1.0),
)  # fmt: skip
_RHO = 0.8
CELLS = {
    "gaussian": Cell("gaussian, shift 0.2 a side", (_shifted("gaussian", 0.2),) * 2),
    "laplace": Cell("laplace, shift 0.5 a side", (LAWS["laplace"],) * 2),  # b = 1
    "student_t3": Cell("student t3, shift 0.5 a side", (LAWS["student_t3"],) * 2),
    # Unit variances, correlation 0.8, mean shift A s = (0.1, −0.1) across the correlation:
    # A = Cholesky factor, s = A⁻¹ (0.1, −0.1) = (0.1, −0.3), D_2 = ‖s‖² = 0.1.
    "gaussian_corr": Cell(
        f"gaussian, correlation {_RHO}, shift (0.1, −0.1)",
        (_shifted("gaussian", 0.1), _shifted("gaussian", -0.3)),
        ((1.0, 0.0), (_RHO, (1.0 - _RHO**2) ** 0.5)),
    ),
    "uniform_t3": Cell(
        "uniform (no shift) × student t3 (shift 0.5)", (_UNIFORM, LAWS["student_t3"])
    ),
    "gaussian_3d": Cell("3-D gaussian, shift 0.2 a side", (_shifted("gaussian", 0.2),) * 3),
    "laplace_3d": Cell("3-D laplace, shift 0.5 a side", (LAWS["laplace"],) * 3),
}
TRANSFORMS = (None, "quantile")


def run_cell(name: str, n: int, reps: int, seed: int) -> dict:
    cell = CELLS[name]
    exact, oracle = exact_and_oracle(cell.axes, n)
    out = {"law": name, "label": cell.label, "n": n, "reps": reps, "exact": exact.tolist()}
    out["oracle_deficit"] = oracle.tolist()
    for transform in TRANSFORMS:
        rng = np.random.default_rng([seed, list(CELLS).index(name), n])  # same draws
        lower = np.empty((reps, len(ORDERS)))
        grids, auto_maps = set(), 0
        start = time.perf_counter()
        for r in range(reps):
            p, q = cell.draw(rng, n)
            b = rdpjax.lower_bound(p, q, ORDERS, alpha=ALPHA, discrete=False, transform=transform)
            lower[r] = b.lower
            grids.add(b.grid_shape)
            auto_maps += auto_transform(p, q) == "quantile"
        out[str(transform)] = summarize(lower, exact, oracle) | {
            "grids": sorted(" × ".join(map(str, g)) for g in grids),
            "seconds": time.perf_counter() - start,
            "auto_maps": auto_maps,
        }
    return out


def format_table(cells: list[dict]) -> str:
    """Markdown: one row per cell and transform."""
    lines = [
        "| law | n | transform | simultaneous | lower/exact | deficit/oracle | grid | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        for t in ("None", "quantile"):
            e = c[t]
            how = t.lower() if t == "None" else f"quantile (auto maps {e['auto_maps']}/{c['reps']})"
            lines.append(
                f"| {c['label']} | {c['n']:,} | {how} | {table_cells(e)} | {e['grids'][-1]} | "
                f"{e['seconds']:.0f} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--laws", nargs="+", choices=list(CELLS), default=list(CELLS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "calibrate_multid_map.json")
    parser.add_argument(
        "--resume", action="store_true", help="keep the cells --out already holds (same reps, seed)"
    )
    parser.add_argument("--table", type=Path, help="only print the markdown table of this JSON")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(format_table(json.loads(args.table.read_text())["cells"]))
        return 0
    command = "python benchmarks/calibration/calibrate_multid_map.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    meta = {"command": command, "orders": list(ORDERS), "alpha": ALPHA, "complete": False}
    done = {}
    if args.resume and args.out.exists():  # cells are seeded by (seed, law, n): resuming is exact
        old = json.loads(args.out.read_text())
        if old["meta"].get("seed") == args.seed:  # files of this version of the study say it
            done = {(c["law"], c["n"]): c for c in old["cells"] if c["reps"] == args.reps}
    meta["seed"] = args.seed
    cells = []
    for name in args.laws:
        for n in (int(v) for v in args.n):
            cell = done.get((name, n)) or run_cell(name, n, args.reps, args.seed)
            cells.append(cell)
            print("\n".join(format_table([cell]).splitlines()[-2:]), flush=True)
            write_json(args.out, meta, cells=cells)  # an interrupted study keeps what it measured
    print(format_table(cells))
    write_json(args.out, meta | {"complete": True}, cells=cells)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
