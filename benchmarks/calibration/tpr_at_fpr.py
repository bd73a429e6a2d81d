"""Certified TPR at a target FPR on cells: coverage and power on a panel of laws.

    PYTHONPATH=. python benchmarks/calibration/tpr_at_fpr.py [--reps 1000] [--out PATH]

(``PYTHONPATH=.``: the checkout's rdpjax.) Writes
``benchmarks/results/calibration/tpr_at_fpr.json``.

The statistic is :func:`rdpjax.rejection.operating.cell_operating_point`, which
:func:`rdpjax.rejection.set_test` and :func:`rdpjax.audit` run with ``tpr_at_fpr=``. Each law of
the panel (the one ``tests/rejection/test_operating.py`` uses, ``tests/rejection/cell_laws.py``:
Gaussian shift, Laplace, Cauchy, a 10% mixture leak, the Gaussian subsampled at ½, a discrete
Laplace, randomized response) is a pair of cell laws with known masses, so every replication's
true rates are known: a selection sample of 8% of n a side ranks the cells by its estimated log
ratio (as :func:`~rdpjax.rejection.set_test` does), then n draws a side are counted per cell,
and the true FPR and TPR of the randomized distinguisher (``true_rates``: the cells ranked
above its cut, and its share of the cut cell) are compared with the certified point.

Printed per law, n and target FPR: the miss rate of the certified ends (true FPR above the
upper end, or true TPR below the certified TPR: two one-sided bounds at α/4 each, so ≤ α/2 =
0.025 is what is claimed) with its exact 95% interval, that of both two-sided intervals (≤ α),
the mean certified TPR, and the Neyman–Pearson TPR at the target (the best
any distinguisher of FPR ≤ target reaches: the cells by true ratio, the last one randomized), so
power reads as certified / best.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from rdpjax.rejection.operating import cell_operating_point

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "rejection"))  # the panel the tests use
from cell_laws import LAWS, true_rates  # noqa: E402

TARGETS = (0.001, 0.01, 0.1)
SIZES = (10**3, 10**4, 10**5)
SELECTION = 0.08  # rdpjax.rejection.options.DEFAULT_SELECTION


def best_tpr(p: np.ndarray, q: np.ndarray, target: float) -> float:
    """The Neyman–Pearson TPR at FPR ``target``: cells by true ratio, the last one in part."""
    with np.errstate(divide="ignore"):
        order = np.argsort(-(np.log(p) - np.log(q)), kind="stable")
    cq, cp = np.cumsum(q[order]), np.cumsum(p[order])
    j = int(np.searchsorted(cq, target, side="right"))
    if j >= cq.size:
        return 1.0
    before_q, before_p = (cq[j - 1], cp[j - 1]) if j else (0.0, 0.0)
    share = (target - before_q) / q[order[j]]
    return float(before_p + share * p[order[j]])


def cell(law: str, n: int, target: float, reps: int, alpha: float) -> dict:
    p, q = LAWS[law]
    rng = np.random.default_rng([7, n, int(1e4 * target), sorted(LAWS).index(law)])
    m = int(SELECTION * n)
    misses, both, certified, tprs = 0, 0, 0, []
    for _ in range(reps):
        sel_p, sel_q = rng.multinomial(m, p), rng.multinomial(m, q)
        scores = np.log(sel_p + 0.5) - np.log(sel_q + 0.5)
        c_p, c_q = rng.multinomial(n - m, p), rng.multinomial(n - m, q)
        point = cell_operating_point(rng, c_p, c_q, scores, target, alpha)
        fpr, tpr = true_rates(point, scores, p, q)
        (f_lo, f_hi), (t_lo, t_hi) = point.fpr_interval, point.tpr_interval
        misses += not (fpr <= f_hi and tpr >= t_lo)
        both += not (f_lo <= fpr <= f_hi and t_lo <= tpr <= t_hi)
        certified += point.certified
        tprs.append(point.tpr_interval[0])
    ci = stats.binomtest(misses, reps).proportion_ci(0.95, "exact")
    best = best_tpr(p, q, target)
    return {
        "law": law, "n": n, "target_fpr": target, "reps": reps, "misses": misses,
        "miss_rate": misses / reps, "miss_ci": [ci.low, ci.high], "both_misses": both,
        "certified": certified,
        "mean_tpr_lower": float(np.mean(tprs)), "best_tpr": best,
        "power": float(np.mean(tprs)) / best if best > 0 else None,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--laws", nargs="+", default=sorted(LAWS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument(
        "--out", default=str(ROOT / "benchmarks" / "results" / "calibration" / "tpr_at_fpr.json")
    )
    args = parser.parse_args()
    rows, start = [], time.perf_counter()
    print(f"{'law':20} {'n':>7} {'FPR':>6} {'miss':>6} {'95% CI':>16} {'both':>5} {'TPR ≥':>8} "
          f"{'best':>8}")  # fmt: skip
    for law in args.laws:
        for n in args.sizes:
            for target in TARGETS:
                r = cell(law, n, target, args.reps, args.alpha)
                rows.append(r)
                lo, hi = r["miss_ci"]
                print(
                    f"{law:20} {n:>7} {target:>6g} {r['miss_rate']:>6.3f} "
                    f"[{lo:.3f}, {hi:.3f}] {r['both_misses'] / r['reps']:>5.3f} "
                    f"{r['mean_tpr_lower']:>8.4f} {r['best_tpr']:>8.4f}"
                )
    worst = max(rows, key=lambda r: r["miss_rate"])
    pooled = sum(r["misses"] for r in rows), sum(r["certified"] for r in rows)
    print(f"largest miss rate {worst['miss_rate']:.3f} ({worst['law']}, n = {worst['n']}, "
          f"FPR {worst['target_fpr']:g}); pooled {pooled[0]:,} of {pooled[1]:,} certified "
          f"replications; {time.perf_counter() - start:.0f} s")  # fmt: skip
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    command = "PYTHONPATH=. python benchmarks/calibration/tpr_at_fpr.py " + " ".join(sys.argv[1:])
    Path(args.out).write_text(json.dumps({"command": command.strip(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
