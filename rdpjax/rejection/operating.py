"""Certified TPR at a target FPR: the operating point membership-inference users read.

A distinguisher says "P" (the outputs on x, the *positives*) on a set S of outputs; its false
positive rate is ``Q(S)`` and its true positive rate ``P(S)``. Users of LeakPro and ML Privacy
Meter ask for the TPR at a small FPR, and for the FPR the distinguisher actually reached, not the
one it aimed at. Both come here with exact, finite-sample intervals.

**The threshold, fixed without tuning.** Negatives are ranked by a score fixed before they are
seen, ties broken by independent uniform jitter (so the scores are continuous). With n
negatives, the threshold is the (k + 1)-th largest negative score, where k depends on n, the
target FPR and α only: the largest k whose Clopper–Pearson upper bound on k of n is at most the
target (:func:`fpr_count`). For any law of the scores the true FPR of "score > threshold" is
then distributed as Beta(k + 1, n − k), the (k + 1)-th largest of n uniforms (David & Nagaraja,
*Order Statistics*, 3rd ed., §2.1), whose upper quantile is the Clopper–Pearson bound for k of n
(Clopper & Pearson, Biometrika 26, 1934): so ``FPR ≤ target`` with probability ≥ 1 − α/4, with
no multiplicity correction, and exactly k negatives lie above it. Given the threshold, the
positives are independent of it, and their count above it is Binomial(n_P, TPR): its
Clopper–Pearson interval is exact. The two intervals are each two-sided at 1 − α/2, so they hold
together at 1 − α.

**On cells.** :func:`cell_operating_point` ranks cells (their order fixed by the selection draws,
:mod:`rdpjax.rejection.cells`) and takes only the certification counts per cell, as a streamed
audit keeps them. Cells are ranked by their score (equal scores by cell index), and inside the
cell that holds the threshold every draw gets an independent uniform jitter, drawn from a
Generator: the threshold is the jitter of that cell's (a + 1)-th negative from the top, whose
share of the cell above it is ``V ~ Beta(a + 1, c_q − a)`` (the (a + 1)-th largest of c_q
uniforms is Beta(c_q − a, a + 1), David & Nagaraja §2.1), and the cell's positives above it are
``Binomial(c_p, V)`` given V, their jitters being independent of the negatives'. Drawing V and
that count is the same randomized distinguisher as jittering every draw ("positive" for the
cells ranked higher, and for the cut cell with probability V), so the argument above holds
unchanged, at any n the stream counts, in O(C) for C cells (host numpy).

The set test runs it as a registered statistic of its cells (:mod:`rdpjax.rejection.statistics`,
:data:`OPERATING_POINTS`): ``SetOptions(tpr_at_fpr=…)`` asks for it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from rdpjax.rejection.binomial import clopper_pearson
from rdpjax.rejection.statistics import CellStatistic, Counts, Selection, register

__all__ = [
    "OPERATING_POINTS",
    "OperatingPoint",
    "cell_operating_point",
    "fpr_count",
    "interval",
    "operating_point",
]


def interval(k: Any, n: int, alpha: float) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval for k of n, each tail at α/2 (exact at every n)."""
    lo, hi = clopper_pearson(k, n, alpha / 2)
    return float(lo), float(hi)


def fpr_count(n: int, target: float, alpha: float) -> int:
    """The largest k whose two-sided Clopper–Pearson upper end at 1 − α is ≤ ``target``; −1 if none.

    The upper end increases with k, so a bisection over k = −1, …, n − 1 finds it in
    O(log n) evaluations.
    """
    upper = lambda k: float(clopper_pearson(k, n, alpha / 2)[1][()])  # noqa: E731
    lo, hi = -1, n - 1  # upper(lo) ≤ target (or lo = −1); the answer lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if upper(mid) <= target:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclasses.dataclass(frozen=True)
class OperatingPoint:
    """The operating point reached at a target FPR, its intervals holding jointly at 1 − α.

    Attributes:
        target_fpr: the FPR asked for.
        threshold: "positive" iff score > threshold (+inf when no k certifies the target; on raw
            scores with ties among the negatives the FPR interval's lower end assumes none); on
            cells, the selection's estimated log ratio of the cell that holds the threshold
            (the distinguisher is the cell rank, then the jitter: ``cut``).
        fpr: the FPR reached, ``false_positives / n_out`` (≤ the target).
        fpr_interval: Clopper–Pearson interval for the true FPR of the distinguisher, at
            1 − α/2; its upper end is ≤ ``target_fpr`` whenever ``certified``.
        tpr: the TPR reached, ``true_positives / n_in``.
        tpr_interval: Clopper–Pearson interval for its true TPR, at 1 − α/2; its lower end is
            the certified TPR at the target FPR.
        certified: whether some k ≥ 0 has its upper FPR bound ≤ the target (it needs about
            ``n_out ≥ log(α/4) / log(1 − target)``); if not, nothing is called positive and
            both rates are exactly 0 (intervals (0, 0)).
        true_positives, false_positives, n_in, n_out, alpha: the counts and level behind them.
        cut: on cells, the distinguisher: ``(cell, share)``, the cell holding the threshold and
            the share V of its outputs called positive (module docstring); its true rates under
            a law are the masses of the cells ranked higher plus V times that cell's.
            ``None`` on raw scores.
    """

    target_fpr: float
    threshold: float
    fpr: float
    fpr_interval: tuple[float, float]
    tpr: float
    tpr_interval: tuple[float, float]
    certified: bool
    true_positives: int
    false_positives: int
    n_in: int
    n_out: int
    alpha: float
    cut: tuple[int, float] | None = None

    def describe(self) -> str:
        """One line, e.g. ``TPR 0.412 [0.38, 0.44] at FPR 0.0090 [0.005, 0.0099] (target 0.01)``."""
        lo, hi = self.tpr_interval
        flo, fhi = self.fpr_interval
        tail = "" if self.certified else "; not certifiable with these negatives"
        return (
            f"TPR {self.tpr:.4f} [{lo:.4f}, {hi:.4f}] at FPR {self.fpr:.4g} "
            f"[{flo:.4g}, {fhi:.4g}] (target {self.target_fpr:g}{tail})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (an uncertified threshold is ``None``)."""
        out = dataclasses.asdict(self)
        out["threshold"] = self.threshold if math.isfinite(self.threshold) else None
        out["fpr_interval"], out["tpr_interval"] = list(self.fpr_interval), list(self.tpr_interval)
        out["cut"] = None if self.cut is None else list(self.cut)
        return out


def operating_point(
    tp: int, fp: int, n_in: int, n_out: int, k: int, target: float, alpha: float,
    threshold: float, cut: tuple[int, float] | None = None,
) -> OperatingPoint:  # fmt: skip
    """The :class:`OperatingPoint` of counts ``tp`` of ``n_in`` and ``fp`` of ``n_out`` at k."""
    f_lo, f_hi = interval(fp, n_out, alpha / 2)
    t_lo, t_hi = interval(tp, n_in, alpha / 2)
    if k < 0:  # nothing called positive: both rates are exactly 0
        f_lo = f_hi = t_lo = t_hi = 0.0
    return OperatingPoint(
        target_fpr=float(target),
        threshold=float(threshold),
        fpr=fp / n_out,
        fpr_interval=(f_lo, f_hi),
        tpr=tp / n_in,
        tpr_interval=(t_lo, t_hi),
        certified=k >= 0,
        true_positives=int(tp),
        false_positives=int(fp),
        n_in=int(n_in),
        n_out=int(n_out),
        alpha=float(alpha),
        cut=cut,
    )


def cell_operating_point(
    rng: np.random.Generator,
    counts_p: np.ndarray,
    counts_q: np.ndarray,
    scores: np.ndarray,
    target: float,
    alpha: float,
) -> OperatingPoint:
    """TPR at ``target`` FPR from certification counts per cell, cells ranked by ``scores``.

    Args:
        rng: the jitter's randomness (independent of the draws).
        counts_p: certification draws of P (the positives) per cell.
        counts_q: the same for Q (the negatives).
        scores: each cell's score, fixed before the certification draws (the selection's
            estimated log ratio): larger means "P".
        target: the FPR asked for, in (0, 1).
        alpha: the level of the two intervals together, in (0, 1).

    Returns:
        :class:`OperatingPoint` (module docstring for why its intervals are exact).
    """
    c_p, c_q = np.asarray(counts_p, np.int64), np.asarray(counts_q, np.int64)
    n_p, n_q = int(c_p.sum()), int(c_q.sum())
    if min(n_p, n_q) < 1:
        raise ValueError(f"each side needs certification draws; got {n_p:,} and {n_q:,}")
    k = fpr_count(n_q, float(target), alpha / 2)
    if k < 0:
        return operating_point(0, 0, n_p, n_q, k, target, alpha, math.inf)
    order = np.argsort(-np.asarray(scores, np.float64), kind="stable")
    above_q = np.cumsum(c_q[order])  # negatives in the top j + 1 cells
    j = int(np.searchsorted(above_q, k, side="right"))  # the cell holding the (k + 1)-th one
    cell = order[j]
    before_q = int(above_q[j] - c_q[cell])
    before_p = int(c_p[order[:j]].sum())
    # The threshold is the jitter of the cell's (a + 1)-th negative from the top: the share of
    # the cell above it is Beta(a + 1, c_q − a), and the positives above it Binomial(c_p, V).
    a = k - before_q
    share = float(rng.beta(a + 1, int(c_q[cell]) - a))
    tp = before_p + int(rng.binomial(int(c_p[cell]), share))
    cut = (int(cell), share)
    return operating_point(tp, k, n_p, n_q, k, target, alpha, float(scores[cell]), cut)


def _plan(selection: Selection) -> tuple[np.ndarray, tuple[float, ...]]:
    """The ranking of the cells and the targets: both fixed by the selection and the options."""
    return selection.scores, tuple(selection.options.tpr_at_fpr)


def _result(
    plan: tuple[np.ndarray, tuple[float, ...]],
    counts: Counts,
    level: float,
    rng: np.random.Generator,
) -> tuple[OperatingPoint, ...]:
    """One point per target, each at ``level / len(targets)``: together at 1 − level."""
    scores, targets = plan
    each = float(level) / len(targets)
    c_p, c_q = np.asarray(counts.p), np.asarray(counts.q)
    return tuple(cell_operating_point(rng, c_p, c_q, scores, f, each) for f in targets)


def _lines(points: tuple[OperatingPoint, ...]) -> list[str]:
    conf = f"{100 * (1 - sum(p.alpha for p in points)):.3g}%"
    head = (
        f"TPR at FPR, telling x from x' on the same cells (intervals together at {conf}, "
        "apart from the verdict):"
    )
    return [head, *(f"  {p.describe()}" for p in points)]


OPERATING_POINTS = register(
    CellStatistic(
        name="operating_points",
        asked=lambda options: bool(options.tpr_at_fpr),
        plan=_plan,
        result=_result,
        lines=_lines,
        to_json=lambda points: [p.to_dict() for p in points],
    )
)
"""The registered statistic: ``SetOptions(tpr_at_fpr=…)`` asks for it; ``SetTest.extras``
holds its points under ``"operating_points"``."""
