"""The support-gap note (issue 47): how often it appears on gaps of each size and without one.

    python benchmarks/calibration/support_gap.py [--reps 200] [--n 1e3 1e4 1e5] [--out FILE]

Each cell draws ``reps`` pairs of n discrete outputs a side (numpy, one seed per cell) and asks
both rules whether to note a gap: the rule of ``rdpjax.estimator.support.support_gap`` (since
issue 47: the values one side's first half never produced, Clopper–Pearson bounds on both sides'
probability there, a note when the ratio is ≥ ``GAP_MIN_RATIO`` = 10 at α = 0.05), and the rule
before it (values seen ≥ 5 times on one side and never on the other, holding ≥ 25% of that side's
draws and ≥ 20 of them). Laws:

* ``gap_s``: x' uniform on 50 values; x the same with probability 1 − s and, with probability s,
  one of 10 values x' never produces (s = 1%, 5%, 10%, 22%, 50%): a gap, ε(λ) = ∞.
* ``uniform_10k``: both uniform on 10⁴ values (no leak; at small n most values are seen once,
  and about half the values one side produced the other never did).
* ``k_rr``: k-ary randomized response, k = 100, ε = 2, inputs 0 and 1 (ratio ≤ e² ≈ 7.4, below
  the threshold 10).
* ``rounded_gaussian``: round(N(0, 10²)) against round(N(5, 10²)): no gap, a likelihood ratio
  that grows without bound in the tails, where the mass is low.
* ``rr_one_bit``: randomized response on 10 bits at ε0 = 1.5, the zoo's reference pair (one bit
  differs: ratio ≤ e^1.5), and ``rr_all_bits``, all ones against all zeros (ratios up to e^15: no
  gap, but a ratio beyond what these n resolve).

Reported per cell: the share of replications noted by each rule (with its Wilson 95% interval),
and the median ratio the new rule shows. Writes ``benchmarks/results/calibration/support_gap.json``
unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402
from scipy import stats  # noqa: E402

from rdpjax.estimator.support import (  # noqa: E402
    GAP_MIN_RATIO,
    encode_pair,
    gap_evidence,
    split_rows,
    support_gap,
)

ALPHA = 0.05
RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
SHARES = (0.01, 0.05, 0.10, 0.22, 0.50)


def _gap(share):
    def draw(rng, n):
        p = np.where(rng.random(n) < share, 100 + rng.integers(0, 10, n), rng.integers(0, 50, n))
        return p, rng.integers(0, 50, n)

    return draw


def _uniform(rng, n):
    return rng.integers(0, 10**4, n), rng.integers(0, 10**4, n)


def _k_rr(rng, n, k=100, eps=2.0):
    keep = np.exp(eps) / (np.exp(eps) + k - 1)

    def side(true):
        return np.where(rng.random(n) < keep, true, (true + rng.integers(1, k, n)) % k)

    return side(0), side(1)


def _rounded_gaussian(rng, n):
    return np.rint(10.0 * rng.standard_normal(n)), np.rint(5.0 + 10.0 * rng.standard_normal(n))


def _rr_bits(differ, bits=10, eps=1.5):
    flip = 1.0 / (1.0 + np.exp(eps))
    weights = 1 << np.arange(bits)
    x = (np.arange(bits) < differ).astype(np.int64)

    def draw(rng, n):
        p = (rng.random((n, bits)) >= flip).astype(np.int64) * x  # true bit 1: kept
        p += (rng.random((n, bits)) < flip).astype(np.int64) * (1 - x)  # true bit 0: flipped
        q = (rng.random((n, bits)) < flip).astype(np.int64)
        return p @ weights, q @ weights

    return draw


LAWS = {
    **{f"gap_{round(100 * s)}%": _gap(s) for s in SHARES},
    "uniform_10k": _uniform,
    "k_rr": _k_rr,
    "rounded_gaussian": _rounded_gaussian,
    "rr_one_bit": _rr_bits(1),
    "rr_all_bits": _rr_bits(10),
}


def old_rule(counts_p: np.ndarray, counts_q: np.ndarray) -> bool:
    """The rule before issue 47: ≥ 5 draws a value, ≥ 25% of the side and ≥ 20 draws."""
    for own, theirs in ((counts_p, counts_q), (counts_q, counts_p)):
        gap = (own >= 5) & (theirs == 0)
        draws = own[gap].sum()
        if draws >= 20 and draws >= 0.25 * own.sum():
            return True
    return False


def run_cell(name: str, n: int, reps: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, list(LAWS).index(name), n])
    new, old, ratios = 0, 0, []
    for _ in range(reps):
        p, q = LAWS[name](rng, n)
        codes_p, codes_q, support = encode_pair(p, q)
        size = len(support)
        halves_p, halves_q = split_rows(codes_p, size), split_rows(codes_q, size)
        new += support_gap(halves_p, halves_q, ALPHA) is not None
        old += old_rule(halves_p.sum(0), halves_q.sum(0))
        ratios.append(
            max(
                gap_evidence(halves_p, halves_q, ALPHA / 4)["ratio"],
                gap_evidence(halves_q, halves_p, ALPHA / 4)["ratio"],
            )
        )
    out = {"law": name, "n": n, "reps": reps, "median_ratio": float(np.median(ratios))}
    for label, k in (("new", new), ("old", old)):
        ci = stats.binomtest(k, reps).proportion_ci(method="wilson")
        out[label] = {"noted": k / reps, "ci": [float(ci.low), float(ci.high)]}
    return out


def format_table(cells: list[dict]) -> str:
    lines = [
        "| law | n | noted, new rule (95% CI) | noted, old rule | median ratio shown |",
        "|---|---|---|---|---|",
    ]
    for c in cells:
        low, high = c["new"]["ci"]
        lines.append(
            f"| {c['law']} | {c['n']:,} | {c['new']['noted']:.3f} [{low:.3f}, {high:.3f}] | "
            f"{c['old']['noted']:.3f} | {c['median_ratio']:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--laws", nargs="+", choices=list(LAWS), default=list(LAWS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "support_gap.json")
    args = parser.parse_args(argv)
    cells = []
    for name in args.laws:
        for n in (int(v) for v in args.n):
            cells.append(run_cell(name, n, args.reps, args.seed))
            print(format_table(cells[-1:]).splitlines()[-1], flush=True)
    table = format_table(cells)
    print(table)
    command = (
        f"python benchmarks/calibration/support_gap.py --reps {args.reps} --n "
        f"{' '.join(f'{v:g}' for v in args.n)} --seed {args.seed}"
    )
    meta = {"command": command, "alpha": ALPHA, "gap_min_ratio": GAP_MIN_RATIO}
    write_json(args.out, meta, cells=cells, table=table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
