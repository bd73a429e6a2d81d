"""Any order (issue 51): tight true claims against samplers that return their batches reordered.

    PYTHONPATH=. python benchmarks/calibration/order.py --part betting --law gaussian
    PYTHONPATH=. python benchmarks/calibration/order.py --part renyi --law gaussian
    PYTHONPATH=. python benchmarks/calibration/order.py --part power
    PYTHONPATH=. python benchmarks/calibration/order.py --part bound --law laplace --max-n 10000

A sampler ``sample(rng, database, m)`` is called for m i.i.d. outputs but may return them in any
order. Three laws, each against its tight true claim (α = 0.05, outputs per side up to
``--max-n``):

* ``gaussian``: N(1, 1) on x, N(0, 1) on x', against ``gdp(1)``;
* ``laplace``: 1 + Laplace(1) against Laplace(1), against ``pure_dp(1)``;
* ``geometric``: 1 + G − G' against G − G' (G, G' geometric on {1, 2, …} with success
  probability 1 − e^{−1/2}: the two-sided geometric, integers of both signs), against
  ``pure_dp(0.5)``.

Orders: ``as drawn``; ``sorted`` and ``reversed`` (the same draws, each batch sorted ascending
or descending); ``repeat``: a discrete law written as ``np.repeat(values, rng.multinomial(m,
pmf))`` — the geometric clipped to [−40, 40], the Gaussian and Laplace laws rounded to a grid
of 0.01 on [−8, 9] (both are post-processings of the outputs, so the claim stays true); and,
with ``--control``, ``sorted, bet in the given order``: the betting test as it was before issue
51 (its within-batch permutation replaced by the identity), to show the study detects the fault.

Parts:

* ``betting``: ``rdpjax.rejection.betting.log_wealth_paths`` on R replications at once, each
  batch of :func:`~rdpjax.rejection.betting.batch_ends` (``batch`` 1024) drawn and reordered as
  the sampler would return it — the same test as ``audit(…, n=Looks(…))`` for these claims
  with ``test="both"`` (GDP: ``"auto"``);
* ``renyi``: ``rdpjax.audit(…, n=rdpjax.Looks(…), test="renyi")`` (the Rényi looks of
  :mod:`rdpjax.auditing.sequential`), one audit per replication, key ``seed·10⁴ + r``;
* ``bound``: ``rdpjax.lower_bound`` on arrays a user passes (λ = 2, 5, ``max_n`` a side, one
  batch): as drawn, sorted without a key (the quantile map's pilot is then a fixed set of ranks;
  the call warns), sorted with ``key=`` (rows put in the key's order first), and ``repeat``.
  Counted: replications with a bound above the exact ``D_λ`` at either order (continuous laws;
  the truth of the unrounded law, an upper bound for the rounded one by data processing), and the
  mean bounds, which should agree between the orders in distribution;
* ``power``: the issue-45 power cases (Gaussian sum against gdp(0.5) and gdp(0.8), Laplace sum
  against gdp(0.5); the draws of ``sequential_sets.py``, seeds 0, 1, 2, R = 200 by default):
  median pairs per side to refute, with each batch in a random order and the wealth watched
  after every pair (the test) or only at the ends of batches (the alternative), and in the
  given order (the test before issue 51) on the same draws; the medians recorded before issue
  51 at R = 200 were 110 / 902 / 135.

The false-refutation rate carries a Wilson 95% interval; "same as drawn" counts the replications
whose result equals the ``as drawn`` one on the same draws. Writes
``benchmarks/results/calibration/order_<part>[_<law>].json``; prints the command and a markdown
table.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import jax
import numpy as np
from scipy import stats

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax.claims import gdp, pure_dp  # noqa: E402
from rdpjax.rejection import betting  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "calibration"
ALPHA = 0.05
BATCH = 1024
R_GEO = np.exp(-0.5)  # the geometric's ratio: P(D = k) ∝ r^|k|, ε = 1/2
CLIP = 40  # the repeat sampler's geometric support [−40, 40]
GRID = np.round(np.arange(-8.0, 9.0 + 1e-9, 0.01), 2)  # the repeat sampler's rounding grid
ORDERS = ("as drawn", "sorted", "reversed", "repeat")
CONTROL = "sorted, bet in the given order"
OLD_MEDIANS = (110, 902, 135)  # issue 45 / sequential_sets.json before issue 51 (R = 200)
BEFORE = "given order"
WATCHES = (("every pair", True), ("batch ends", False), (BEFORE, True))
"""The power part's variants: the test (random order, wealth watched after every pair), the
batch-ends alternative, and the test before issue 51 (the given order) on the same draws."""


def wilson(k: int, n: int) -> list[float]:
    ci = stats.binomtest(k, n).proportion_ci(method="wilson")
    return [float(ci.low), float(ci.high)]


# ----------------------------------------------------------------------------- the laws


def _geometric_pmf(shift: int) -> np.ndarray:
    """pmf of clip(shift + D, −CLIP, CLIP) on −CLIP … CLIP, D two-sided geometric."""
    k = np.arange(-CLIP, CLIP + 1) - shift
    pmf = (1 - R_GEO) / (1 + R_GEO) * R_GEO ** np.abs(k)
    # The clipped tails: P(D ≥ K) = r^K/(1 + r) for K ≥ 1, the same below −K.
    pmf[0] = R_GEO ** (CLIP + shift) / (1 + R_GEO)
    pmf[-1] = R_GEO ** (CLIP - shift) / (1 + R_GEO)
    return pmf / pmf.sum()  # rounding only: the terms sum to 1


def _rounded_pmf(cdf) -> np.ndarray:
    """pmf of a law rounded to GRID (nearest point), the mass beyond the ends on the ends."""
    edges = np.concatenate([[-np.inf], 0.5 * (GRID[1:] + GRID[:-1]), [np.inf]])
    pmf = np.diff(cdf(edges))
    return pmf / pmf.sum()


LAWS = {
    "gaussian": dict(
        claim=gdp(1.0),
        draw=lambda rng, loc, shape: loc + rng.normal(size=shape),
        values=GRID,
        pmf={1: _rounded_pmf(stats.norm(1.0).cdf), 0: _rounded_pmf(stats.norm(0.0).cdf)},
    ),
    "laplace": dict(
        claim=pure_dp(1.0),
        draw=lambda rng, loc, shape: loc + rng.laplace(size=shape),
        values=GRID,
        pmf={1: _rounded_pmf(stats.laplace(1.0).cdf), 0: _rounded_pmf(stats.laplace(0.0).cdf)},
    ),
    "geometric": dict(
        claim=pure_dp(0.5),
        draw=lambda rng, loc, shape: (
            int(loc) + rng.geometric(1 - R_GEO, shape) - rng.geometric(1 - R_GEO, shape)
        ),
        values=np.arange(-CLIP, CLIP + 1),
        pmf={1: _geometric_pmf(1), 0: _geometric_pmf(0)},
    ),
}


def _reorder(out: np.ndarray, order: str) -> np.ndarray:
    """A batch (rows of ``(R, m)`` or one ``(m,)``) as the sampler returns it."""
    if order == "as drawn":
        return out
    out = np.sort(out, axis=-1)
    return out[..., ::-1] if order == "reversed" else out


def _repeat(rng, law: dict, loc: int, rows: int, m: int) -> np.ndarray:
    counts = rng.multinomial(m, law["pmf"][loc], size=rows)
    return np.stack([np.repeat(law["values"], c) for c in counts])


def sampler(law: dict, order: str):
    """The black box ``sample(rng, database, m)`` of ``law`` returning its batches in ``order``;
    database ``[1]`` is x, ``[0]`` is x'."""

    def sample(rng, database, m):
        loc = int(database[0])
        if order == "repeat":
            return _repeat(rng, law, loc, 1, m)[0]
        return _reorder(law["draw"](rng, loc, m), order)

    sample.__name__ = f"sample_{order.replace(' ', '_')}"
    return sample


# ----------------------------------------------------------------------------- betting


def _betting_arrays(law: dict, order: str, reps: int, max_n: int, seed: int):
    """``(R, max_n)`` outputs per side, batch by batch as the sampler returns them."""
    rng = np.random.default_rng(seed)
    ends = betting.batch_ends(max_n, BATCH)
    sides = []
    for loc in (1, 0):
        parts, start = [], 0
        for end in ends:
            if order == "repeat":
                parts.append(_repeat(rng, law, loc, reps, end - start))
            else:
                parts.append(_reorder(law["draw"](rng, loc, (reps, end - start)), order))
            start = end
        sides.append(np.concatenate(parts, axis=1))
    return sides


def _in_given_order(rng, batch):
    return batch  # the betting test before issue 51: no permutation


def betting_part(law_name: str, reps: int, max_n: int, seed: int, control: bool) -> list[dict]:
    law = LAWS[law_name]
    key = jax.random.key(seed)
    rows, reference = [], None
    orders = (*ORDERS, CONTROL) if control else ORDERS
    for order in orders:
        # as drawn / sorted / reversed / the control: the same draws (seed); repeat: its own.
        data_order = "sorted" if order == CONTROL else order
        xs, ys = _betting_arrays(law, data_order, reps, max_n, seed + (order == "repeat"))
        t0 = time.perf_counter()
        if order == CONTROL:
            saved, betting._shuffled = betting._shuffled, _in_given_order
            try:
                out = betting.log_wealth_paths(key, xs, ys, law["claim"], alpha=ALPHA, batch=BATCH)
            finally:
                betting._shuffled = saved
        else:
            out = betting.log_wealth_paths(key, xs, ys, law["claim"], alpha=ALPHA, batch=BATCH)
        seconds = time.perf_counter() - t0
        stop = out["stop"]
        if order == "as drawn":
            reference = stop
        k = int(np.count_nonzero(stop))
        same = None if order in ("as drawn", "repeat") else int(np.sum(stop == reference))
        rows.append(
            {
                "part": "betting", "law": law_name, "claim": law["claim"].to_dict(),
                "order": order, "reps": reps, "max_n": max_n, "seed": seed, "refuted": k,
                "rate": k / reps, "wilson": wilson(k, reps), "same_as_drawn": same,
                "seconds": seconds,
            }
        )  # fmt: skip
        _say(rows[-1])
    return rows


# ----------------------------------------------------------------------------- Rényi looks


def renyi_part(law_name: str, reps: int, max_n: int, seed: int) -> list[dict]:
    law = LAWS[law_name]
    rows, reference = [], None
    for order in ORDERS:
        sample = sampler(law, order)
        results = []
        t0 = time.perf_counter()
        for r in range(reps):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # outputs clamped onto the pilot's grid edge
                report = rdpjax.audit(
                    jax.random.key(seed * 10_000 + r), sample, [1], [0], claim=law["claim"],
                    n=rdpjax.Looks(max_n=max_n), test="renyi", progress=False,
                )  # fmt: skip
            results.append((bool(report.is_refuted), report.n, np.asarray(report.lower)))
        seconds = time.perf_counter() - t0
        if order == "as drawn":
            reference = results
        k = sum(refuted for refuted, _, _ in results)
        same = None
        if order in ("sorted", "reversed"):
            same = sum(
                a[0] == b[0] and a[1] == b[1] and np.allclose(a[2], b[2], rtol=1e-9, atol=1e-12)
                for a, b in zip(results, reference, strict=True)
            )
        rows.append(
            {
                "part": "renyi", "law": law_name, "claim": law["claim"].to_dict(),
                "order": order, "reps": reps, "max_n": max_n, "seed": seed, "refuted": k,
                "rate": k / reps, "wilson": wilson(k, reps), "same_as_drawn": same,
                "seconds": seconds,
            }
        )  # fmt: skip
        _say(rows[-1])
    return rows


# ----------------------------------------------------------------------------- lower_bound

BOUND_ORDERS = (("as drawn", False), ("sorted", False), ("sorted", True), ("repeat", False))
BOUND_LAMBDAS = (2.0, 5.0)


def _exact(law_name: str, lam: float) -> float:
    """``D_λ`` of the unrounded law: N(1, 1) ‖ N(0, 1), or 1 + Laplace(1) ‖ Laplace(1)."""
    if law_name == "gaussian":
        return lam / 2
    if law_name == "laplace":
        inner = lam / (2 * lam - 1) * np.exp(lam - 1) + (lam - 1) / (2 * lam - 1) * np.exp(-lam)
        return float(np.log(inner) / (lam - 1))
    raise SystemExit(f"--part bound takes a continuous law (gaussian, laplace), not {law_name}")


def bound_part(law_name: str, reps: int, n: int, seed: int) -> list[dict]:
    law, rows = LAWS[law_name], []
    truth = np.array([_exact(law_name, lam) for lam in BOUND_LAMBDAS])
    for order, keyed in BOUND_ORDERS:
        rng = np.random.default_rng([seed, ORDERS.index(order)])
        bounds, t0 = [], time.perf_counter()
        for r in range(reps):
            if order == "repeat":
                p, q = (_repeat(rng, law, loc, 1, n)[0] for loc in (1, 0))
            else:
                p, q = (_reorder(law["draw"](rng, loc, n), order) for loc in (1, 0))
            key = jax.random.key(seed * 10_000 + r) if keyed else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "p_samples is sorted" (the case measured)
                bounds.append(rdpjax.lower_bound(p, q, BOUND_LAMBDAS, key=key).lower)
        bounds = np.asarray(bounds)
        k = int(np.sum(np.any(bounds > truth, axis=1)))
        rows.append(
            {
                "part": "bound", "law": law_name, "claim": {"name": "exact D_λ"},
                "order": order + (", key" if keyed else ""), "reps": reps, "max_n": n,
                "seed": seed, "refuted": k, "rate": k / reps, "wilson": wilson(k, reps),
                "same_as_drawn": None, "lambdas": list(BOUND_LAMBDAS), "truth": truth.tolist(),
                "mean_bound": bounds.mean(axis=0).tolist(),
                "sd_bound": bounds.std(axis=0, ddof=1).tolist(),
                "seconds": time.perf_counter() - t0,
            }
        )  # fmt: skip
        _say(rows[-1])
        print(f"  mean bounds {np.round(rows[-1]['mean_bound'], 4)} (truth {np.round(truth, 4)})")
    return rows


# ----------------------------------------------------------------------------- power


def power_part(reps: int, max_n: int) -> list[dict]:
    """The issue-45 power cases on the draws of sequential_sets.py (seeds 0, 1, 2)."""
    import sequential_sets

    rows = []
    for i, (name, draw, claim, _, _) in enumerate(sequential_sets.cases()[:3]):
        xs, ys = draw(np.random.default_rng(i), (reps, max_n))
        row = {"part": "power", "case": name, "claim": claim.to_dict(), "reps": reps}
        row |= {"max_n": max_n, "seed": i, "median_before": OLD_MEDIANS[i]}
        for watch, every in WATCHES:
            t0 = time.perf_counter()
            saved = betting._shuffled
            if watch == BEFORE:
                betting._shuffled = _in_given_order
            try:
                stop = betting.log_wealth_paths(
                    jax.random.key(i), xs, ys, claim, alpha=ALPHA, every_pair=every
                )["stop"]
            finally:
                betting._shuffled = saved
            n = np.where(stop > 0, stop, max_n + 1)
            q1, med, q3 = (float(v) for v in np.percentile(n, [25, 50, 75]))
            row[watch] = {
                "median": med, "quartiles": [q1, q3], "refuted": int(np.count_nonzero(stop)),
                "seconds": time.perf_counter() - t0,
            }  # fmt: skip
        rows.append(row)
        print(
            f"{name}: median {row['every pair']['median']:g} (every pair), "
            f"{row['batch ends']['median']:g} (batch ends), {row[BEFORE]['median']:g} (given "
            f"order, as before issue 51; recorded then at R = 200: {OLD_MEDIANS[i]})",
            flush=True,
        )
    return rows


# ----------------------------------------------------------------------------- output


def _say(row: dict) -> None:
    same = "" if row["same_as_drawn"] is None else f", same as drawn {row['same_as_drawn']}"
    print(
        f"{row['part']} {row['law']} {row['order']}: {row['refuted']}/{row['reps']} refuted"
        f"{same} ({row['seconds']:.0f} s)",
        flush=True,
    )


def table(rows: list[dict]) -> str:
    if rows and rows[0]["part"] == "power":
        lines = [
            "| case | R | median (IQR): random order, every pair | random order, batch ends "
            "| given order (before issue 51) | recorded before (R = 200) |",
            "|---|---|---|---|---|---|",
        ]
        for r in rows:
            cells = []
            for watch, _ in WATCHES:
                w = r[watch]
                cells.append(f"{w['median']:g} ({w['quartiles'][0]:g}–{w['quartiles'][1]:g})")
            lines.append(f"| {r['case']} | {r['reps']} | {' | '.join(cells)} | "
                         f"{r['median_before']} |")  # fmt: skip
        return "\n".join(lines)
    lines = [
        "| test | law, claim | order | R | false refutations (rate, Wilson 95%) | same as drawn |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lo, hi = r["wilson"]
        same = "—" if r["same_as_drawn"] is None else f"{r['same_as_drawn']}/{r['reps']}"
        lines.append(
            f"| {r['part']} | {r['law']}, {r['claim']['name']} | {r['order']} | {r['reps']} | "
            f"{r['refuted']} ({r['rate']:.3f}, {lo:.3f}–{hi:.3f}) | {same} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["betting", "renyi", "bound", "power"], required=True)
    parser.add_argument("--law", choices=sorted(LAWS), default="gaussian")
    parser.add_argument("--reps", type=int, default=None, help="default 400 (power: 200)")
    parser.add_argument("--max-n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--control", action="store_true", help="betting: the old test too")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    reps = args.reps or (200 if args.part == "power" else 400)
    name = "order_power" if args.part == "power" else f"order_{args.part}_{args.law}"
    out = args.out or RESULTS / f"{name}.json"
    command = (
        f"PYTHONPATH=. python benchmarks/calibration/order.py --part {args.part}"
        + ("" if args.part == "power" else f" --law {args.law}")
        + f" --reps {reps} --max-n {args.max_n} --seed {args.seed}"
        + (" --control" if args.control else "")
        + (f" --out {args.out}" if args.out else "")
    )
    print(command, flush=True)
    if args.part == "betting":
        rows = betting_part(args.law, reps, args.max_n, args.seed, args.control)
    elif args.part == "renyi":
        rows = renyi_part(args.law, reps, args.max_n, args.seed)
    elif args.part == "bound":
        rows = bound_part(args.law, reps, args.max_n, args.seed)
    else:
        rows = power_part(reps, args.max_n)
    print(table(rows))
    write_json(out, {"command": command, "alpha": ALPHA, "batch": BATCH}, rows=rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
