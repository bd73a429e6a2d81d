"""Integer outputs with many values: relative frequencies against the KDE on the integers.

    python benchmarks/calibration/calibrate_ordinal.py [--reps 200] [--n 1e3 1e4 1e5] [--out FILE]
    python benchmarks/calibration/calibrate_ordinal.py --table
        benchmarks/results/calibration/calibrate_ordinal.json

Cells: discrete Laplace (two-sided geometric, pmf ∝ e^(−|k|/s)) and the rounded Gaussian
(round of N(0, s²)), each with Q shifted by an integer δ ≈ s/3, scales s = 1, 3, 10, 30, 200, at
n outputs a side. Every replication is bounded by ``rdpjax.lower_bound`` exactly as a user calls
it (λ = 2, 5, 7, α = 0.05, simultaneous) twice: ``discrete=True`` (eq. (9), relative frequencies on
the value box) and ``discrete=False`` (eq. (10), the KDE of the integers as numbers), and a
third time with ``discrete=None`` (the automatic choice). The exact D_λ(P‖Q) is a sum over the
integers (log space, tails below 1e-300 dropped).

Reported per cell and estimator: simultaneous coverage (Wilson 95% interval, scipy), mean
lower/exact per order, and the ratio of the mean deficit (exact − lower) to the oracle deficit
``−Φ⁻¹(α/3) σ*/√n``, σ*² = σ_p² + σ_q² the delta-method variance of eq. (18) at the true pmfs
(Kutta, Askin, Dunsche, arXiv:2212.04739v3), computed here in numpy from its closed form.
Writes ``benchmarks/results/calibration/calibrate_ordinal.json`` unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import summarize, table_cells, write_study  # noqa: E402
from scipy import special, stats  # noqa: E402

import rdpjax  # noqa: E402

ORDERS = (2.0, 5.0, 7.0)
ALPHA = 0.05
SCALES = (1.0, 3.0, 10.0, 30.0, 200.0)
FAMILIES = ("discrete_laplace", "rounded_gaussian")
ESTIMATORS = {"frequencies": True, "kde": False, "auto": None}
RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"


def shift_for(scale: float) -> int:
    return max(1, round(scale / 3))


def pmfs(family: str, scale: float, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """P and Q on a common integer range wide enough that the dropped tails are < 1e-300."""
    width = int(np.ceil((700 * scale) if family == "discrete_laplace" else 40 * scale)) + 2
    k = np.arange(-width, width + shift + 1)
    if family == "discrete_laplace":
        r = np.exp(-1.0 / scale)
        log_c = np.log1p(-r) - np.log1p(r)
        log_p, log_q = log_c - np.abs(k) / scale, log_c - np.abs(k - shift) / scale
        return np.exp(log_p), np.exp(log_q)
    cdf = stats.norm.cdf  # P(round(X) = k) = Φ((k + ½)/s) − Φ((k − ½)/s), by the symmetric side
    p = cdf((-np.abs(k) + 0.5) / scale) - cdf((-np.abs(k) - 0.5) / scale)
    j = k - shift
    q = cdf((-np.abs(j) + 0.5) / scale) - cdf((-np.abs(j) - 0.5) / scale)
    return p, q


def exact_and_oracle(p: np.ndarray, q: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact D_λ(P‖Q) and the oracle deficit −Φ⁻¹(α/3)·σ*/√n per order (eq. (18), τ → 0)."""
    live = (p > 0) & (q > 0)
    lp, lq = np.log(p[live]), np.log(q[live])
    exact, oracle = [], []
    z = -special.ndtri(ALPHA / len(ORDERS))
    for lam in ORDERS:
        log_i = special.logsumexp(lam * lp + (1 - lam) * lq)
        log_j1 = special.logsumexp((2 * lam - 1) * lp + (2 - 2 * lam) * lq)
        log_j2 = special.logsumexp(2 * lam * lp + (1 - 2 * lam) * lq)
        var_p = (lam / (lam - 1)) ** 2 * np.expm1(log_j1 - 2 * log_i)
        var_q = np.expm1(log_j2 - 2 * log_i)  # (J2 − I²)/I²: S2/((λ−1)I)² without a floor
        exact.append(log_i / (lam - 1))
        oracle.append(z * np.sqrt((var_p + var_q) / n))
    return np.array(exact), np.array(oracle)


def draw(rng: np.random.Generator, family: str, scale: float, shift: int, n: int):
    if family == "discrete_laplace":
        prob = -np.expm1(-1.0 / scale)  # X = G1 − G2, G ~ Geometric(1 − e^(−1/s))
        p = rng.geometric(prob, n) - rng.geometric(prob, n)
        q = rng.geometric(prob, n) - rng.geometric(prob, n) + shift
    else:
        p = np.rint(scale * rng.standard_normal(n))
        q = np.rint(scale * rng.standard_normal(n)) + shift
    return p.astype(np.int64), q.astype(np.int64)


def run_cell(family: str, scale: float, n: int, reps: int, seed: int) -> dict:
    shift = shift_for(scale)
    exact, oracle = exact_and_oracle(*pmfs(family, scale, shift), n)
    rng = np.random.default_rng([seed, FAMILIES.index(family), int(scale * 10), n])
    lower = {name: np.empty((reps, len(ORDERS))) for name in ESTIMATORS}
    chosen = []
    start = time.perf_counter()
    for r in range(reps):
        p, q = draw(rng, family, scale, shift, n)
        for name, discrete in ESTIMATORS.items():
            b = rdpjax.lower_bound(p, q, ORDERS, alpha=ALPHA, discrete=discrete)
            lower[name][r] = b.lower
            if discrete is None:
                chosen.append(bool(b.discrete))
    out = {
        "family": family,
        "scale": scale,
        "shift": shift,
        "n": n,
        "reps": reps,
        "exact": exact.tolist(),
        "oracle_deficit": oracle.tolist(),
        "auto_chose_frequencies": float(np.mean(chosen)),
        "seconds": time.perf_counter() - start,
    }
    for name, low in lower.items():
        out[name] = summarize(low, exact, oracle)
    return out


def format_table(cells: list[dict]) -> str:
    """Markdown: one row per cell and estimator (simultaneous coverage, lower/exact, deficit
    over the oracle deficit, per order λ = 2 / 5 / 7)."""
    lines = [
        "| law | scale | shift | n | estimator | simultaneous | lower/exact | deficit/oracle "
        "| discrete=None picks |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        share = c["auto_chose_frequencies"]
        picks = "frequencies" if share == 1 else "kde" if share == 0 else f"{share:.0%} freq."
        for name in ("frequencies", "kde"):
            lines.append(
                f"| {c['family'].replace('_', ' ')} | {c['scale']:g} | {c['shift']} | "
                f"{c['n']:,} | {name} | {table_cells(c[name])} | {picks} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--scales", type=float, nargs="+", default=list(SCALES))
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "calibrate_ordinal.json")
    parser.add_argument("--table", type=Path, help="only print the markdown table of this JSON")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(format_table(json.loads(args.table.read_text())["cells"]))
        return 0
    rdpjax.enable_compilation_cache()
    cells = []
    for family in args.families:
        for scale in args.scales:
            for n in (int(v) for v in args.n):
                cell = run_cell(family, scale, n, args.reps, args.seed)
                cells.append(cell)
                parts = []
                for name in ESTIMATORS:
                    c = cell[name]
                    parts.append(
                        f"{name} {c['simultaneous']:.3f} "
                        f"[{'/'.join(f'{v:.2f}' for v in c['tightness'])}] "
                        f"x{'/'.join(f'{v:.1f}' for v in c['deficit_over_oracle'])}"
                    )
                print(
                    f"{family:16s} s={scale:5g} δ={cell['shift']:3d} n={n:7,d} "
                    f"D={'/'.join(f'{v:.3f}' for v in cell['exact'])} | "
                    + " | ".join(parts)
                    + f" | auto→freq {cell['auto_chose_frequencies']:.2f} "
                    f"[{cell['seconds']:.0f} s]",
                    flush=True,
                )
    command = (
        "python benchmarks/calibration/calibrate_ordinal.py --reps "
        f"{args.reps} --n {' '.join(f'{v:g}' for v in args.n)} --seed {args.seed}"
    )
    write_study(args.out, command, ORDERS, ALPHA, cells, format_table(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
