"""Worst-pair search on numpy black boxes whose worst pair is not the paper's pair (21).

Two numpy mechanisms on databases of m = 10 entries in [0, 1] (replace-one neighbours), each a
deterministic statistic T(x) plus Gaussian noise N(0, s²), so that the exact divergence at any
pair is D_λ = λ (T(x) − T(x'))² / (2 s²) and the worst case is sup |T(x) − T(x')| over
neighbours:

* **soft vote** — T(x) = logistic((mean(x) − 1/2) / τ), τ = 0.2, s = 0.175: a smoothed test
  "is the mean above 1/2?". For a difference d = (x_j − x'_j)/m of the mean, T(x) − T(x') =
  g(c + d/2) − g(c − d/2) is largest when the midpoint c sits at the steepest point 1/2 and |d|
  is largest (1/m), so sup |ΔT| = 2 g(0.55) − 1 = tanh(1/(40 τ)) = 0.12435, attained in the
  *interior*: x_j = 1 vs 0 with the other nine entries summing to 4.5 (no vertex of the box
  reaches it: the best vertex pairs give 0.12245, 98.5% of it). At (21), ΔT = g(0.1) − g(0) =
  0.04335: the exact D_λ at the worst pair is 8.23 times that at (21).
* **noisy 90th percentile** — T(x) = numpy's linearly interpolated 0.9-quantile 0.9 x_(9) +
  0.1 x_(10) (order statistics), s = 0.7. Replacing one entry moves each order statistic at
  most to its neighbour's place, so |ΔT| ≤ 0.9 (x_(9) − x_(8)) + 0.1 (x_(10) − x_(9)) ≤ 0.9,
  attained at the vertex pair x = (0 × 8, 1, 1) vs x' = (0 × 9, 1); at (21), ΔT = 0.1: the
  exact D_λ at the worst pair is 81 times that at (21).

Every search (:func:`rdpjax.search.find_pair` with the black box, m = 10, domain (0, 1),
neighbours "replace-one") certifies its pair on fresh draws at the simultaneous level (λ = 2, 5,
7, Bonferroni); the pair (21) is certified on the same certification keys (common random
numbers), same n, same per-bound level. Each mechanism runs over seeds with optuna's TPE
sampler and, as a baseline, with random search on the same budget.

    python benchmarks/calibration/blackbox_search.py            # 10 seeds, both samplers
    python benchmarks/calibration/blackbox_search.py --quick    # 2 seeds, small budget
    python benchmarks/calibration/blackbox_search.py --trials 50 --restarts 1   # a smaller search
        budget

Writes ``benchmarks/results/calibration/blackbox_search.json`` and ``.md`` (``_quick``,
``_trials50`` … in the name when the budget is changed).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import jax
import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402  (benchmarks/_summary.py, beside this file)

from rdpjax.mechanisms.databases import paper_pair  # noqa: E402
from rdpjax.search import Budget, Certification, Pairs, certify, find_pair, search_keys  # noqa: E402

ORDERS = (2.0, 5.0, 7.0)
ALPHA = 0.05
M = 10
TAU, S_VOTE = 0.2, 0.175
S_QUANTILE = 0.7


def _logistic(z):
    return 1.0 / (1.0 + np.exp(-z))


def vote_statistic(db) -> float:
    return float(_logistic((np.mean(db) - 0.5) / TAU))


def soft_vote(rng, db, n):
    """logistic((mean − 1/2)/τ) + N(0, s²): a smoothed, noisy "is the mean above 1/2?"."""
    return vote_statistic(db) + S_VOTE * rng.standard_normal(n)


def quantile_statistic(db) -> float:
    return float(np.quantile(db, 0.9))


def noisy_percentile(rng, db, n):
    """numpy's 0.9-quantile of the entries + N(0, s²)."""
    return quantile_statistic(db) + S_QUANTILE * rng.standard_normal(n)


@dataclasses.dataclass(frozen=True)
class Case:
    label: str
    sample: Callable
    statistic: Callable
    noise: float
    worst_shift: float
    worst_pair: str

    def exact(self, x, x_prime) -> list[float]:
        """D_λ = λ ΔT² / (2 s²), the Rényi divergence of two Gaussians of one variance."""
        shift = self.statistic(x) - self.statistic(x_prime)
        return [lam * shift**2 / (2 * self.noise**2) for lam in ORDERS]

    def worst(self) -> list[float]:
        return [lam * self.worst_shift**2 / (2 * self.noise**2) for lam in ORDERS]


CASES = (
    Case(
        "soft vote τ=0.2, s=0.175",
        soft_vote,
        vote_statistic,
        S_VOTE,
        float(np.tanh(1 / (40 * TAU))),
        "x_j = 1 vs 0, others summing to 4.5 (interior)",
    ),
    Case(
        "noisy 90th percentile, s=0.7",
        noisy_percentile,
        quantile_statistic,
        S_QUANTILE,
        0.9,
        "(0×8, 1, 1) vs (0×9, 1) (a vertex)",
    ),
)


def run(case: Case, seed: int, method: str, settings: dict) -> dict:
    key = jax.random.key(seed)
    start = time.perf_counter()
    res = find_pair(
        key,
        case.sample,
        ORDERS,
        pairs=Pairs(m=M, domain=(0.0, 1.0), neighbours="replace-one"),
        budget=Budget(method=method, **{k: v for k, v in settings.items() if k != "n"}),
        certification=Certification(n=settings["n"], alpha=ALPHA),
        progress=False,
    )
    seconds = time.perf_counter() - start
    x21, x21_prime = (np.asarray(v, np.float64) for v in paper_pair(M))
    ref = certify(  # the pair (21), on the certification keys of the pair found
        search_keys(key).certify, case.sample, x21, x21_prime, ORDERS, n=settings["n"]
    )
    lower_ref = np.asarray(ref.lower)
    ratio = np.where(lower_ref > 0, res.lower / np.where(lower_ref > 0, lower_ref, 1), np.inf)
    exact_found = case.exact(res.x, res.x_prime)
    return {
        "mechanism": case.label,
        "seed": seed,
        "method": res.method,
        "candidate": res.candidate,
        "neighbours": res.neighbours,
        "x": res.x.tolist(),
        "x_prime": res.x_prime.tolist(),
        "index": int(res.index),
        "lam": list(ORDERS),
        "lower_found": res.lower.tolist(),
        "se_found": res.std_error.tolist(),
        "lower_21": lower_ref.tolist(),
        "se_21": np.asarray(ref.std_error).tolist(),
        "ratio": ratio.tolist(),
        "at_least_3x": bool(np.all(ratio >= 3)),
        "exact_found": exact_found,
        "exact_21": case.exact(x21, x21_prime),
        "exact_worst": case.worst(),
        "share_of_worst": exact_found[0] / case.worst()[0],
        "level": float(res.level),
        "seconds": seconds,
    }


def _cells(values, digits=3) -> str:
    return " / ".join(f"{v:.{digits}f}" for v in values)


def table(rows: list[dict]) -> str:
    lines = [
        "| mechanism | sampler | seed | candidate | lower at (21) | certified lower found "
        "| ratio | ≥ 3× | exact found / worst | s |",
        "|" + "---|" * 10,
    ]
    for r in rows:
        ratio = " / ".join("∞" if not np.isfinite(v) else f"{v:.1f}" for v in r["ratio"])
        lines.append(
            f"| {r['mechanism']} | {r['method']} | {r['seed']} | {r['candidate']} "
            f"| {_cells(r['lower_21'], 4)} | {_cells(r['lower_found'])} | {ratio} "
            f"| {'yes' if r['at_least_3x'] else 'no'} | {r['share_of_worst']:.3f} "
            f"| {r['seconds']:.0f} |"
        )
    return "\n".join(lines)


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for case in CASES:
        for method in sorted({r["method"] for r in rows}):
            sel = [r for r in rows if r["mechanism"] == case.label and r["method"] == method]
            if not sel:
                continue
            out.append(
                {
                    "mechanism": case.label,
                    "method": method,
                    "seeds": len(sel),
                    "at_least_3x": sum(r["at_least_3x"] for r in sel),
                    "min_ratio": float(min(min(r["ratio"]) for r in sel)),
                    "median_ratio_lam2": float(np.median([r["ratio"][0] for r in sel])),
                    "mean_share_of_worst": float(np.mean([r["share_of_worst"] for r in sel])),
                    "exact_21": case.exact(*(np.asarray(v) for v in paper_pair(M))),
                    "exact_worst": case.worst(),
                    "worst_pair": case.worst_pair,
                    "mean_seconds": float(np.mean([r["seconds"] for r in sel])),
                }
            )
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, 40 trials × 2, n = 2e4")
    parser.add_argument("--seeds", type=int, default=None, help="seeds 0..S-1 (default 10)")
    parser.add_argument("--methods", nargs="+", default=["tpe", "random"])
    parser.add_argument("--trials", type=int, default=None, help="trials per restart")
    parser.add_argument("--restarts", type=int, default=None, help="optuna studies per search")
    parser.add_argument("--out", default="benchmarks/results/calibration", help="output directory")
    args = parser.parse_args(argv)
    if args.quick:
        settings = dict(trials=40, restarts=2, n=20_000, search_n=2048, select_n=8192)
    else:
        settings = dict(trials=200, restarts=4, n=100_000, search_n=4096, select_n=16_384)
    seeds = args.seeds or (2 if args.quick else 10)
    command = "python benchmarks/calibration/blackbox_search.py"
    command += " --quick" if args.quick else ""
    suffix = "_quick" if args.quick else ""
    for flag in ("seeds", "trials", "restarts"):
        value = getattr(args, flag)
        if value:
            command += f" --{flag} {value}"
            if flag != "seeds":
                settings[flag] = value
                suffix += f"_{flag}{value}"
    if args.methods != ["tpe", "random"]:
        command += " --methods " + " ".join(args.methods)
    print(f"reproduce with: {command}", flush=True)
    start = time.perf_counter()
    rows = []
    for case in CASES:
        for method in args.methods:
            for seed in range(seeds):
                row = run(case, seed, method, settings)
                rows.append(row)
                print(
                    f"{case.label:<30} {method:<6} seed {seed}: ratio "
                    f"{_cells(row['ratio'], 1)}, exact share {row['share_of_worst']:.3f}, "
                    f"{row['seconds']:.0f} s",
                    flush=True,
                )
    elapsed = time.perf_counter() - start
    summ = summary(rows)
    head = (
        f"`{command}` — {elapsed / 60:.1f} min on {platform.machine()} ({os.cpu_count()} CPUs), "
        f"jax {jax.__version__}. m = {M} entries in [0, 1], replace-one; {settings['restarts']} "
        f"restarts × {settings['trials']} trials on {settings['search_n']:,} draws per side, "
        f"selection on {settings['select_n']:,}, certification on {settings['n']:,} fresh draws "
        f"per side; bounds simultaneous over λ = 2, 5, 7 at 95%. Columns with three values are "
        "per λ = 2 / 5 / 7; ratio = certified lower found / certified lower at (21) (same "
        "certification keys); exact found / worst at λ = 2 (the same at every λ)."
    )
    lines = ["# Black-box worst-pair search vs the pair (21)", "", head, "", table(rows), ""]
    lines += ["| mechanism | sampler | seeds ≥ 3× | min ratio | exact (21) / worst at λ=2 |"]
    lines += ["|---|---|---|---|---|"]
    for s in summ:
        lines.append(
            f"| {s['mechanism']} | {s['method']} | {s['at_least_3x']} of {s['seeds']} "
            f"| {s['min_ratio']:.1f} | {s['exact_21'][0]:.4f} / {s['exact_worst'][0]:.4f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"blackbox_search{suffix}.md").write_text(text)
    meta = {"command": command, "seconds": elapsed, "orders": list(ORDERS), "alpha": ALPHA}
    write_json(out / f"blackbox_search{suffix}.json", {**meta, **settings}, summary=summ, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
