"""Continuous laws off the paper's zoo: coverage and tightness of the KDE bound, with and without
the pilot quantile map (``transform="quantile"``), and with the rule that chooses (``"auto"``).

    python benchmarks/calibration/calibrate_offzoo.py [--reps 200] [--n 1e3 1e4 1e5] [--laws ...]
        [--out FILE]
                                          [--transforms none quantile auto]
    python benchmarks/calibration/calibrate_offzoo.py --table
        benchmarks/results/calibration/calibrate_offzoo.json

Each cell draws ``reps`` replications of n outputs a side (numpy, seeded per cell) and bounds
each with ``rdpjax.lower_bound`` exactly as a user calls it (λ = 2, 5, 7, α = 0.05, simultaneous
over the three orders), once per transform. The exact D_λ(P‖Q) and the oracle deficit
``−Φ⁻¹(α/3) σ*/√n`` (σ*² the delta-method variance of eq. (18) of Kutta, Askin, Dunsche,
arXiv:2212.04739v3 at the true densities, no floor) come from adaptive quadrature (scipy).
Reported per cell and transform: simultaneous coverage with its Wilson 95% interval, mean
lower/exact per order, mean deficit / oracle deficit per order, the seconds for R bounds, and
for ``auto`` in how many replications it applied the map. Each transform bounds the same draws.
Writes ``benchmarks/results/calibration/calibrate_offzoo.json`` unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import summarize, table_cells, write_study  # noqa: E402
from scipy import integrate, special, stats  # noqa: E402

import rdpjax  # noqa: E402

ORDERS = (2.0, 5.0, 7.0)
ALPHA = 0.05
TRANSFORMS = (None, "quantile", "auto")
RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"


@dataclass(frozen=True)
class Law:
    """P = the law of ``X + shift``, Q = the law of X; ``logpdf`` of X, ``draw(rng, n)`` of X."""

    name: str
    logpdf: Callable
    draw: Callable
    shift: float
    points: tuple = ()  # quadrature break points (modes, spikes) of X
    atoms: tuple = ()  # ((value, mass_p, mass_q), ...) for laws with point masses
    clip: tuple | None = None  # outputs clipped to [a, b] after the shift (the atoms' law)


def _mixture(weights, locs, scales):
    weights, locs, scales = (np.asarray(v, float) for v in (weights, locs, scales))

    def logpdf(x):
        terms = [
            np.log(w) + stats.norm.logpdf(x, m, s)
            for w, m, s in zip(weights, locs, scales, strict=True)
        ]
        return special.logsumexp(terms)

    def draw(rng, n):
        comp = rng.choice(len(weights), n, p=weights)
        return locs[comp] + scales[comp] * rng.standard_normal(n)

    return logpdf, draw


def _clipped_gaussian_atoms(shift, a=-1.0, b=1.0):
    # X = clip(N(0,1), a, b): atoms at a and b; P is the law of clip(N(shift, 1), a, b).
    return (
        (a, stats.norm.cdf(a - shift), stats.norm.cdf(a)),
        (b, stats.norm.sf(b - shift), stats.norm.sf(b)),
    )


LAWS = {
    "gaussian": Law("gaussian", stats.norm.logpdf, lambda r, n: r.standard_normal(n), 0.5),
    "laplace": Law(
        "laplace", stats.laplace.logpdf, lambda r, n: r.laplace(0.0, 1.0, n), 0.5, (0.0,)
    ),
    "bimodal": Law(
        "bimodal", *_mixture([0.5, 0.5], [0.0, 50.0], [1.0, 1.0]), 0.3, points=(0.0, 50.0)
    ),
    "spike_slab": Law(
        "spike_slab", *_mixture([0.9, 0.1], [0.0, 0.0], [0.1, 10.0]), 0.03, points=(0.0,)
    ),
    "cauchy": Law("cauchy", stats.cauchy.logpdf, lambda r, n: r.standard_cauchy(n), 0.5, (0.0,)),
    "student_t3": Law(
        "student_t3", stats.t(3).logpdf, lambda r, n: r.standard_t(3, n), 0.5, points=(0.0,)
    ),
    "lognormal": Law(
        # X = e^Z: P = law of e^(Z + shift)·… is a scale family; here P = X + shift (skewed,
        # support [shift, ∞) ⊂ Q's (0, ∞) so D(P‖Q) is finite).
        "lognormal",
        stats.lognorm(1.0).logpdf,
        lambda r, n: np.exp(r.standard_normal(n)),
        0.2,
        points=(0.2, 1.0),
    ),
    "clipped_gaussian": Law(
        "clipped_gaussian",
        stats.norm.logpdf,
        lambda r, n: r.standard_normal(n),
        0.3,
        points=(-1.0, 1.0),
        atoms=_clipped_gaussian_atoms(0.3),
        clip=(-1.0, 1.0),
    ),
    # Issue 22's "expensive mechanism" cell: D_2 = 1 (last, so the other laws keep their draws).
    "gaussian_shift1": Law(
        "gaussian_shift1", stats.norm.logpdf, lambda r, n: r.standard_normal(n), 1.0
    ),
}


def _integral(law: Law, c_p: float, c_q: float) -> float:
    """∫ p^c_p q^c_q dx over the continuous part (in log space), plus the atoms' terms."""
    a, b = law.clip if law.clip is not None else (-np.inf, np.inf)

    def integrand(x):
        lp, lq = law.logpdf(x - law.shift), law.logpdf(x)
        return float(np.exp(c_p * lp + c_q * lq)) if np.isfinite(lp) and np.isfinite(lq) else 0.0

    pts = sorted({*law.points, *(v + law.shift for v in law.points)})
    if np.isinf(a):
        total = 0.0
        edges = [-np.inf, *pts, np.inf]
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            total += integrate.quad(integrand, lo, hi, limit=400, epsabs=0, epsrel=1e-11)[0]
    else:
        inner = [v for v in pts if a < v < b]
        total = integrate.quad(integrand, a, b, points=inner or None, limit=400, epsrel=1e-11)[0]
    for _, mp, mq in law.atoms:
        total += mp**c_p * mq**c_q
    return total


def exact_and_oracle(law: Law | Sequence[Law], n: int) -> tuple[np.ndarray, np.ndarray]:
    """D_λ and the oracle deficit ``−Φ⁻¹(α/3) σ*/√n`` (σ*² of eq. (18) at the true densities).

    ``law`` may be a sequence of laws of independent axes: every integral ∫ p^a q^b is then the
    product of the axes' 1-D integrals.
    """
    axes = (law,) if isinstance(law, Law) else tuple(law)

    def integral(c_p: float, c_q: float) -> float:
        return math.prod(_integral(axis, c_p, c_q) for axis in axes)

    z = -special.ndtri(ALPHA / len(ORDERS))
    exact, oracle = [], []
    for lam in ORDERS:
        i = integral(lam, 1 - lam)
        j1 = integral(2 * lam - 1, 2 - 2 * lam)
        j2 = integral(2 * lam, 1 - 2 * lam)
        var_p = (lam / (lam - 1)) ** 2 * (j1 / i**2 - 1)
        var_q = j2 / i**2 - 1
        exact.append(np.log(i) / (lam - 1))
        oracle.append(z * np.sqrt((var_p + var_q) / n))
    return np.array(exact), np.array(oracle)


def run_cell(law: Law, n: int, reps: int, seed: int, transforms) -> dict:
    exact, oracle = exact_and_oracle(law, n)
    out = {"law": law.name, "shift": law.shift, "n": n, "reps": reps, "exact": exact.tolist()}
    out["oracle_deficit"] = oracle.tolist()
    for transform in transforms:
        rng = np.random.default_rng([seed, list(LAWS).index(law.name), n])  # same draws for each
        lower = np.empty((reps, len(ORDERS)))
        grids, mapped = set(), 0
        start = time.perf_counter()
        for r in range(reps):
            p, q = law.draw(rng, n) + law.shift, law.draw(rng, n)
            if law.clip is not None:  # clip(N(shift, 1)) against clip(N(0, 1))
                p, q = np.clip(p, *law.clip), np.clip(q, *law.clip)
            b = rdpjax.lower_bound(p, q, ORDERS, alpha=ALPHA, discrete=False, transform=transform)
            lower[r] = b.lower
            grids.add(b.grid_shape[0])
            mapped += b.transform is not None
        out[str(transform)] = summarize(lower, exact, oracle) | {
            "grid_sizes": sorted(grids),
            "seconds": time.perf_counter() - start,
            "mapped": mapped,
        }
    return out


def format_table(cells: list[dict]) -> str:
    """Markdown: one row per cell and transform (simultaneous coverage, lower/exact, deficit
    over the oracle deficit per order λ = 2 / 5 / 7, grid size, seconds for the R bounds; for
    ``auto``, the replications it mapped out of R)."""
    lines = [
        "| law | n | transform | simultaneous | lower/exact | deficit/oracle | grid | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        for t in ("None", "quantile", "auto"):
            if t not in c:
                continue
            e = c[t]
            label = f"auto (mapped {e['mapped']}/{c['reps']})" if t == "auto" else t.lower()
            lines.append(
                f"| {c['law'].replace('_', ' ')} | {c['n']:,} | {label} | "
                f"{table_cells(e)} | {max(e['grid_sizes']):,} | {e['seconds']:.0f} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--laws", nargs="+", choices=list(LAWS), default=list(LAWS))
    parser.add_argument(
        "--transforms",
        nargs="+",
        choices=["none", "quantile", "auto"],
        default=["none", "quantile"],
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "calibrate_offzoo.json")
    parser.add_argument("--table", type=Path, help="only print the markdown table of this JSON")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(format_table(json.loads(args.table.read_text())["cells"]))
        return 0
    transforms = [None if t == "none" else t for t in args.transforms]
    rdpjax.enable_compilation_cache()
    cells = []
    for name in args.laws:
        for n in (int(v) for v in args.n):
            cell = run_cell(LAWS[name], n, args.reps, args.seed, transforms)
            cells.append(cell)
            parts = []
            for t in transforms:
                c = cell[str(t)]
                parts.append(
                    f"{t or 'none'} {c['simultaneous']:.3f} "
                    f"[{'/'.join(f'{v:.2f}' for v in c['tightness'])}] "
                    f"x{'/'.join(f'{v:.1f}' for v in c['deficit_over_oracle'])} "
                    f"g{max(c['grid_sizes'])} {c['seconds']:.0f}s"
                )
            print(
                f"{name:16s} n={n:7,d} D={'/'.join(f'{v:.3f}' for v in cell['exact'])} | "
                + " | ".join(parts),
                flush=True,
            )
    command = (
        f"python benchmarks/calibration/calibrate_offzoo.py --reps {args.reps} --n "
        f"{' '.join(f'{v:g}' for v in args.n)} --seed {args.seed} "
        f"--transforms {' '.join(args.transforms)}"
    )
    write_study(args.out, command, ORDERS, ALPHA, cells, format_table(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
