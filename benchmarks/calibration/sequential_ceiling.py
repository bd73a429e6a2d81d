"""How far below the fixed n95 can any sequential audit's median stop? (issue 25's 3× target)

    python benchmarks/calibration/sequential_ceiling.py [--ratio 3] [--results FILE]

``FILE``: ``benchmarks/calibration/sequential.py``'s JSON (default
``benchmarks/results/calibration/sequential.json``).

Issue 25 asks that the sequential audit's median sample size be at least ``ratio`` = 3× below
n95, the smallest fixed n whose audit refutes in 95% of runs, on three false claims. Two ceilings,
neither of which depends on the schedule:

**This bound** (measured, from ``benchmarks/calibration/sequential.py``'s fixed-n power curves).
The event
"the sequential audit stopped by n" is a test of level ≤ α on n outputs a side, so its
probability under the false claim is at most the power of the most powerful such test; the
fixed-n audit at n, which spends all of α on one look there, is what rdpjax has for it. A median
≤ n95/3 therefore needs the fixed-n power at n95/3 to be ≥ 1/2 even with a schedule built
knowing the case. Printed: that power on the measured grid (the first grid n ≥ n95/3, so an
upper value).

**Any statistic** (Gaussian limit). Where a statistic is asymptotically normal, its running value
is a Brownian motion with drift θ√n (in z units) and n95 = (z_α + z_0.95)²/θ². Let a schedule
spend level a_k on the stops that fall in (n_{k−1}, n_k]. By Neyman–Pearson, the probability of
stopping in that segment is at most Φ(θ√n_k − z_{a_k}) (the segment's stops are a level-a_k test
on n_k outputs). For a median ≤ n95_j/3 in case j the segments up to n95_j/3 must give ≥ 1/2.
Printed: the least total α that achieves this for the three cases at once (the spending is
minimised over the first two segments on a grid, the last solved exactly); above α = 0.05 no
schedule on any asymptotically normal statistic reaches the target, however well it is tuned
to these three cases in advance.

For reference, the best case for any sequential test: the likelihood-ratio test that knows both
laws (a Gaussian shift θ), stopping when the likelihood ratio reaches 1/α (level α by Ville's
inequality), against the z-test's n95 — its median stopping time by Monte Carlo.

Writes ``benchmarks/results/calibration/sequential_ceiling.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
ALPHA = 0.05


def measured_ceiling(case: dict, ratio: float) -> dict:
    """Fixed-n power of rdpjax's audit at the first measured n ≥ n95/ratio."""
    target = case["fixed_n95"] / ratio
    above = [f for f in case["fixed"] if f["n"] >= target]
    first = min(above, key=lambda f: f["n"])
    return {
        "case": case["case"],
        "n95": case["fixed_n95"],
        "n95_over_ratio": target,
        "grid_n": first["n"],
        "fixed_power": first["power"],
        "median_sequential_default": case["sequential"]["uniform, ratio 2"]["median_drawn"],
    }


def segment_level(need: float, drift: float) -> float:
    """Least level a with Φ(drift − z_a) ≥ need (0 when nothing is needed)."""
    if need <= 0:
        return 0.0
    return float(norm.sf(drift - norm.ppf(need)))


def least_total_alpha(n95s, ratio: float, alpha: float = ALPHA, grid: int = 100) -> dict:
    """Least Σ a_k giving every case P(stop by n95/ratio) ≥ 1/2 (Gaussian limit; docstring)."""
    n95s = sorted(n95s)
    stops = [n / ratio for n in n95s]
    z_total = norm.isf(alpha) + norm.isf(0.05)
    # drifts[j][k]: case j's z-drift θ_j·√n at the end of segment k
    drifts = [[z_total * np.sqrt(s / n) for s in stops] for n in n95s]

    def power(j: int, spent: list[float]) -> float:
        return sum(norm.cdf(drifts[j][k] - norm.isf(a)) for k, a in enumerate(spent) if a > 0)

    def rest(spent: list[float]) -> list[float] | None:
        """Complete ``spent`` case by case with the least level each case still needs."""
        spent = list(spent)
        for j in range(len(spent), len(n95s)):
            spent.append(segment_level(0.5 - power(j, spent), drifts[j][j]))
        # A grid level may overshoot a later case's need (fine) or leave its own case short.
        if any(power(j, spent[: j + 1]) < 0.5 - 1e-9 for j in range(len(n95s))):
            return None
        return spent

    best = rest([])
    free = min(2, len(n95s) - 1)  # minimise over the first segments' levels on a grid
    axes = np.meshgrid(*[np.linspace(0.0, alpha, grid)] * free) if free else []
    for levels in np.array(axes).reshape(free, -1).T if free else []:
        spent = rest(list(levels))
        if spent is not None and (best is None or sum(spent) < sum(best)):
            best = spent
    assert best is not None
    return {"n95": n95s, "stops": stops, "levels": best, "total": float(sum(best))}


def oracle_sprt(theta: float = 0.1, reps: int = 2000, seed: int = 0) -> dict:
    """Median stop of the likelihood-ratio test of N(θ, 1) against N(0, 1) at 1/α, over n95."""
    n95 = (norm.isf(ALPHA) + norm.isf(0.05)) ** 2 / theta**2
    rng = np.random.default_rng(seed)
    horizon = int(6 * n95)
    llr = np.cumsum(theta * rng.normal(theta, 1.0, (reps, horizon)) - theta**2 / 2, axis=1)
    crossed = llr >= np.log(1 / ALPHA)
    stops = np.where(crossed.any(axis=1), crossed.argmax(axis=1) + 1, np.inf)
    median = float(np.median(stops))
    return {"theta": theta, "reps": reps, "n95": n95, "median": median, "ratio": n95 / median}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratio", type=float, default=3.0)
    parser.add_argument("--results", type=Path, default=RESULTS / "sequential.json")
    parser.add_argument("--out", type=Path, default=RESULTS / "sequential_ceiling.json")
    args = parser.parse_args(argv)
    power = json.loads(args.results.read_text())["power"]

    rows = [measured_ceiling(case, args.ratio) for case in power]
    rs = f"{args.ratio:g}"
    print(f"This bound: fixed-n power at n95/{rs} (a median ≤ n95/{rs} needs ≥ 0.5)\n")
    print(f"| case | n95 | n95/{rs} | measured n | fixed-n power | sequential median (default) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['case']} | {r['n95']:,} | {r['n95_over_ratio']:,.0f} | {r['grid_n']:,} | "
            f"{r['fixed_power']:.3f} | {r['median_sequential_default']:,.0f} |"
        )
    limit = least_total_alpha([c["fixed_n95"] for c in power], args.ratio)
    print(
        f"\nAny asymptotically normal statistic: least total α for a median ≤ n95/{rs} in "
        f"all three cases = {limit['total']:.4f} (levels "
        + ", ".join(f"{a:.4f}" for a in limit["levels"])
        + " up to n = "
        + ", ".join(f"{s:,.0f}" for s in limit["stops"])
        + f"); α = {ALPHA}: "
        + ("reachable" if limit["total"] <= ALPHA else "not reachable")
    )
    sprt = oracle_sprt()
    print(
        f"Oracle likelihood-ratio sequential test (Gaussian shift θ = {sprt['theta']}, "
        f"R = {sprt['reps']}): median {sprt['median']:,.0f} against the z-test's n95 "
        f"{sprt['n95']:,.0f}: {sprt['ratio']:.2f}× fewer"
    )
    write_json(
        args.out,
        {
            "command": f"python benchmarks/calibration/sequential_ceiling.py --ratio {rs}",
            "alpha": ALPHA,
        },
        measured=rows,
        gaussian_limit=limit,
        oracle_sprt=sprt,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
