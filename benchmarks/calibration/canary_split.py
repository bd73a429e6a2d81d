"""One-run canaries: how to split α over the guess grid, on a panel of score laws.

    PYTHONPATH=. python benchmarks/calibration/canary_split.py --part scan \
        [--m 1000 10000] [--laws ...] [--reps R]

(``PYTHONPATH=.``: the checkout's rdpjax.) ``rdpjax.canaries.one_run_bits`` reports the largest
ε rejected by 2G tests, one Steinke test (arXiv:2305.08846v1 Thm 3.1/5.2) and one f_{ε,δ} test
(Mahloujifar et al., arXiv:2410.22235v1) per guess pair of the grid; their levels must sum to α
(Bonferroni). This script compares ways of splitting α, on the *same* scores, beside
jax_privacy's ``CanaryScoreAuditor(in, out).epsilon_one_run`` (significance 0.05, δ = 10⁻⁵).

Laws (m canaries, bits b_i ~ Bernoulli(½), scores from the law; higher: more likely included):
``gauss`` N(μ b, 1) with μ the Gaussian mechanism's at (4, 10⁻⁵)-DP; ``laplace`` b +
Laplace(¼) (4-DP); ``t3`` 2b + Student-t₃; ``memorized`` 4·b·B + N(0, 1) with B ~
Bernoulli(0.2) (only a fifth of the included canaries stand out; one-sided signal); ``rounded``
round(N(μ b, 1)) (integer scores, many ties); ``subsampled`` 3·b·B + N(0, 1), B ~
Bernoulli(½) (the shift present with probability ½); ``sparse`` 6·b·B + N(0, 1), B ~
Bernoulli(0.03) (a few included canaries memorized: about 15 at m = 10³); ``gumbel`` 1.5b +
Gumbel(0, 1) and ``neg_gumbel`` 1.5b − Gumbel(0, 1) (a shift of skewed noise: the long tail is
the *less* informative one, as with scores such as −loss).

Rules: those of :func:`rules` (a grid and a weight w per pair, summing to 1: ``even``, the
library's; ``two_sided_<s>``, a share s of α over the two-sided pairs; ``size_*``, weights
growing with the guess count; ``min_<r>``, pairs of fewer than r guesses dropped; ``coarse_*``,
the fractions 1%, 3%, 10%, 30%, 100%) and ``adaptive_<ratio>`` (one test per total, its split
read from the unlabelled scores, :func:`choose_pairs`). Each is scored from the same per-pair
counts with f-DP tests only, each pair's at 0.95·w·α (the f_{ε,δ} tests' 95% of α; Steinke's
5% share is left out, it rarely gives the maximum). ``even`` (w = 1/G) is then the library's
``epsilon_fdp``; its ``epsilon`` is the larger of that and Steinke's bound.

Writes ``benchmarks/results/calibration/canary_split.json`` (cells merged by part, law and m).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import dp_accounting
import numpy as np

from rdpjax.canaries import fdp
from rdpjax.canaries.guesses import DEFAULT_FRACTIONS, correct_guesses, guess_grid

ALPHA = 0.05
DELTA = 1e-5
OUT = Path(__file__).resolve().parents[1] / "results" / "calibration" / "canary_split.json"
COARSE = (0.01, 0.03, 0.1, 0.3, 1.0)
MU4 = 1.0 / dp_accounting.get_sigma_gaussian(4.0, DELTA)


def _law(name: str, rng: np.random.Generator, m: int) -> tuple[np.ndarray, np.ndarray]:
    bits = rng.integers(0, 2, m)
    noise = rng.normal(0.0, 1.0, m)
    if name == "gauss":
        return MU4 * bits + noise, bits
    if name == "laplace":
        return bits + rng.laplace(0.0, 0.25, m), bits
    if name == "t3":
        return 2.0 * bits + rng.standard_t(3, m), bits
    if name == "memorized":
        return 4.0 * bits * (rng.random(m) < 0.2) + noise, bits
    if name == "rounded":
        return np.round(MU4 * bits + noise), bits
    if name == "subsampled":
        return 3.0 * bits * (rng.random(m) < 0.5) + noise, bits
    if name == "sparse":
        return 6.0 * bits * (rng.random(m) < 0.03) + noise, bits
    if name == "gumbel":
        return 1.5 * bits + rng.gumbel(0.0, 1.0, m), bits
    if name == "neg_gumbel":
        return 1.5 * bits - rng.gumbel(0.0, 1.0, m), bits
    raise ValueError(name)


LAWS = (
    "gauss",
    "laplace",
    "t3",
    "memorized",
    "rounded",
    "subsampled",
    "sparse",
    "gumbel",
    "neg_gumbel",
)


def _two_sided_share(grid: np.ndarray, share: float) -> np.ndarray:
    """Weights: ``share`` of α over the two-sided pairs, the rest over the one-sided ones."""
    two = grid[:, 1] > 0
    if two.all() or not two.any():
        return np.full(grid.shape[0], 1.0 / grid.shape[0])
    return np.where(two, share / two.sum(), (1.0 - share) / (~two).sum())


def _size_weights(grid: np.ndarray, power: float) -> np.ndarray:
    w = grid.sum(axis=1).astype(float) ** power
    return w / w.sum()


def rules(m: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Name → (grid, weights summing to 1) of every rule the scan compares."""
    base = guess_grid(m, DEFAULT_FRACTIONS, ALPHA)
    coarse = guess_grid(m, COARSE, ALPHA)
    even = lambda g: np.full(g.shape[0], 1.0 / g.shape[0])  # noqa: E731
    out = {"even": (base, even(base))}
    for share in (0.6, 0.7, 0.8, 0.9, 1.0):
        out[f"two_sided_{share:g}"] = (base, _two_sided_share(base, share))
    out["size_sqrt"] = (base, _size_weights(base, 0.5))
    out["size_log"] = (base, np.log2(base.sum(axis=1)) / np.log2(base.sum(axis=1)).sum())
    both = _two_sided_share(base, 0.75) * base.sum(axis=1) ** 0.5
    out["two_sided_0.75_sqrt"] = (base, both / both.sum())
    for least in (20, 30, 50):
        fewer = base[base.sum(axis=1) >= least]
        out[f"min_{least}"] = (fewer, even(fewer))
    fewer = base[base.sum(axis=1) >= 30]
    out["min_30_two_sided_0.6"] = (fewer, _two_sided_share(fewer, 0.6))
    out["coarse_even"] = (coarse, even(coarse))
    out["coarse_two_sided_0.75"] = (coarse, _two_sided_share(coarse, 0.75))
    return out


RATIOS = (1.25, 1.5, 2.0)
"""The ``ratio`` of :func:`choose_pairs` (the split of each total read from the unlabelled
scores): the ``adaptive_<ratio>`` rules."""


def guess_totals(m: int) -> np.ndarray:
    """The default grid's totals r = ⌊φm⌋, filtered as ``guess_grid`` does at G₀ = their count."""
    totals = np.unique(np.floor(np.asarray(DEFAULT_FRACTIONS) * m).astype(np.int64))
    totals = totals[totals >= 1]
    return totals[totals >= np.log2(2.0 * totals.size / ALPHA)]


def choose_pairs(scores: np.ndarray, totals: np.ndarray, ratio: float) -> np.ndarray:
    """Each total's ``(k_in, k_out)`` read from the scores **without their bits** (tried, not
    kept): with c the mean of the middle 80% of the scores, ``up`` the mean of the ⌊r/2⌋
    highest minus c and ``low`` c minus the mean of the ⌊r/2⌋ lowest, all r guesses "in" if
    ``up ≥ ratio·low``, all "out" if ``low ≥ ratio·up``, else half and half (r = m: half and
    half). Valid at no cost in α: a function of the output with exactly r guesses, which is all
    Steinke et al.'s Thm 3.1 (arXiv:2305.08846v1) asks of a guess vector; so one test per total
    (G = 7 at m = 10³) instead of two. (A median for c snapped to rounded scores' values and
    chose one-sided guesses on the ``rounded`` law: the first scan, benchmarks/LOG.md.)"""
    ordered = np.sort(scores)
    m = ordered.size
    centre = ordered[m // 10 : m - m // 10].mean()
    pairs = []
    for r in totals.tolist():
        half, two = max(r // 2, 1), (r // 2, r - r // 2)
        up = ordered[m - half :].mean() - centre
        low = centre - ordered[:half].mean()
        if r >= m or up == low:
            pairs.append(two)
        elif up >= ratio * low:
            pairs.append((r, 0))
        elif low >= ratio * up:
            pairs.append((0, r))
        else:
            pairs.append(two)
    return np.array(pairs, np.int64)


def _splits(r: int, m: int) -> list[tuple[int, int]]:
    """The candidate pairs of r guesses: all in, half and half, all out ((m, 0), (0, m) dropped)."""
    two = [(r // 2, r - r // 2)]
    return two if r >= m else [(r, 0), *two, (0, r)]


def _jax_steinke(scores: np.ndarray, bits: np.ndarray) -> float:
    from jax_privacy.auditing import CanaryScoreAuditor

    return float(
        CanaryScoreAuditor(scores[bits == 1], scores[bits == 0]).epsilon_one_run(ALPHA, DELTA)
    )


def scan_cell(law: str, m: int, reps: int) -> dict:
    """Mean ε of each rule (f-DP tests at 0.95·w·α per pair) and jax's, on the same scores."""
    table = rules(m)
    totals = guess_totals(m)
    adaptive = {(p, 1.0 / totals.size) for r in totals for p in _splits(int(r), m)}
    pairs = sorted({tuple(p) for g, _ in table.values() for p in g} | {p for p, _ in adaptive})
    index = {p: i for i, p in enumerate(pairs)}
    union = np.array(pairs)
    rows = sorted(
        {(index[tuple(p)], w) for g, ws in table.values() for p, w in zip(g, ws, strict=True)}
        | {(index[p], w) for p, w in adaptive}
    )
    row_of = {key: j for j, key in enumerate(rows)}
    pair_idx = np.array([i for i, _ in rows])
    levels = 0.95 * ALPHA * np.array([w for _, w in rows])
    eps = {name: [] for name in table} | {f"adaptive_{k:g}": [] for k in RATIOS} | {"jax": []}
    chosen = {f"adaptive_{k:g}": {} for k in RATIOS}
    wins = {name: {} for name in ("even", "two_sided_0.8")}
    for r in range(reps):
        scores, bits = _law(law, np.random.default_rng([7, m, LAWS.index(law), r]), m)
        counts = correct_guesses(scores, bits, union)
        per_row = fdp.epsilon_lower(m, union.sum(axis=1)[pair_idx], counts[pair_idx], DELTA, levels)
        for name, (g, ws) in table.items():
            vals = np.array(
                [per_row[row_of[(index[tuple(p)], w)]] for p, w in zip(g, ws, strict=True)]
            )
            eps[name].append(float(vals.max()))
            if name in wins and vals.max() > 0:
                key = str(tuple(int(x) for x in g[int(np.argmax(vals))]))
                wins[name][key] = wins[name].get(key, 0) + 1
        for ratio in RATIOS:
            name, vals = f"adaptive_{ratio:g}", []
            for pair in map(tuple, choose_pairs(scores, totals, ratio).tolist()):
                vals.append(per_row[row_of[(index[pair], 1.0 / totals.size)]])
                side = "in" if pair[1] == 0 else "out" if pair[0] == 0 else "two"
                chosen[name][side] = chosen[name].get(side, 0) + 1
            eps[name].append(float(max(vals)))
        eps["jax"].append(_jax_steinke(scores, bits))
    means = {k: float(np.mean(v)) for k, v in eps.items()}
    return {
        "law": law,
        "m": m,
        "reps": reps,
        "mean": means,
        "ratio_to_even": {
            k: v / means["even"] if means["even"] else None for k, v in means.items()
        },
        "ratio_to_jax": {k: v / means["jax"] if means["jax"] else None for k, v in means.items()},
        "best_pair": wins,
        "adaptive_splits": chosen,
        "adaptive_totals": totals.tolist(),
    }


def panel_cell(law: str, m: int, reps: int) -> dict:
    """The library's bounds as a user gets them (``one_run_bits``, defaults) beside jax's."""
    from rdpjax.canaries import one_run_bits

    rows = []
    for r in range(reps):
        scores, bits = _law(law, np.random.default_rng([7, m, LAWS.index(law), r]), m)
        res = one_run_bits(scores, bits, delta=DELTA, alpha=ALPHA)
        rows.append([res.epsilon, res.epsilon_fdp, res.epsilon_steinke, res.mu])
        rows[-1].append(_jax_steinke(scores, bits))
    mean = np.array(rows).mean(axis=0)
    names = ("epsilon", "epsilon_fdp", "epsilon_steinke", "mu", "jax")
    return {
        "law": law,
        "m": m,
        "reps": reps,
        "mean": dict(zip(names, mean.tolist(), strict=True)),
        "per_rep": {k: [row[i] for row in rows] for i, k in enumerate(names)},
        "ratio_to_jax": float(mean[0] / mean[-1]) if mean[-1] else None,
    }


def _merge(part: str, cells: list[dict], command: str, out: Path) -> None:
    old = json.loads(out.read_text()) if out.exists() else {}
    same = lambda a, b: a["law"] == b["law"] and a["m"] == b["m"]  # noqa: E731
    keep = [c for c in old.get(part, []) if not any(same(c, n) for n in cells)]
    old[part] = keep + cells
    commands = old.setdefault("commands", {}).get(part, [])
    old["commands"][part] = commands + [command] * (command not in commands)
    out.write_text(json.dumps(old, indent=1, default=float) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["scan", "panel"], required=True)
    parser.add_argument("--m", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--laws", nargs="+", choices=LAWS, default=list(LAWS))
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    command = f"PYTHONPATH=. python benchmarks/calibration/canary_split.py {argv_text}"
    print(command, flush=True)
    cells, start = [], time.perf_counter()
    for m in args.m:
        for law in args.laws:
            t = time.perf_counter()
            cell = (panel_cell if args.part == "panel" else scan_cell)(law, m, args.reps)
            cell["seconds"] = time.perf_counter() - t
            cells.append(cell)
            shown = cell["mean"] if args.part == "panel" else cell["ratio_to_even"]
            print(law, m, json.dumps(shown, default=lambda v: round(float(v), 3)), flush=True)
            _merge(args.part, [cell], command, args.out)
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
