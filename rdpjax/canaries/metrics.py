"""Membership-inference metrics on canary scores: TPR at a target FPR, and AUROC, with intervals.

These are the numbers LeakPro and ML Privacy Meter users read. Unlike the ε bounds of
:mod:`rdpjax.canaries.api`, their intervals treat each side's scores as i.i.d. draws (scores
of canaries that are exchangeable within a side, or of many independent runs); in one training
run the canaries share the model, so read them there as descriptions of the attack, and the ε
bounds as the statistically valid claim.

* :func:`tpr_at_fpr`: the threshold is the (k+1)-th largest "out" score, with k fixed in advance
  from (n_out, the target FPR, α) alone — the largest k whose Clopper–Pearson upper bound is at
  most the target. With one threshold fixed this way nothing is tuned on the scores, so no
  multiplicity correction is needed: for i.i.d. out scores with any law F, the true FPR of
  "score > X_(k+1)" is stochastically at most Beta(k + 1, n_out − k) (the (k+1)-th largest of
  n_out uniforms; ties only lower it, by the quantile transform X = F⁻¹(U)), whose upper
  quantile is the Clopper–Pearson bound for k of n_out (Clopper & Pearson 1934, Biometrika 26;
  the j-th smallest of n uniforms is Beta(j, n − j + 1), David & Nagaraja, *Order
  Statistics*). Given the threshold, the in scores are independent of it, so the count above
  it is Binomial(n_in, TPR): its Clopper–Pearson interval is exact.
* :func:`auroc`: the Mann–Whitney statistic Â = P̂(in > out) + ½ P̂(in = out), with Hoeffding's
  distribution-free interval for two-sample U-statistics, ±√(log(2/α) / (2 min(n_in, n_out)))
  (Hoeffding 1963, JASA 58, the bound for two-sample U-statistics), valid at every n, and DeLong,
  DeLong & Clarke-Pearson's asymptotic interval (1988, Biometrics 44, structural components),
  narrower but only asymptotically valid.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import stats

from rdpjax._validation import check_level
from rdpjax.canaries.guesses import split
from rdpjax.rejection import binomial
from rdpjax.rejection.operating import OperatingPoint, fpr_count, operating_point

__all__ = ["Auroc", "OperatingPoint", "auroc", "clopper_pearson", "tpr_at_fpr"]


def clopper_pearson(k: Any, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided exact interval for a binomial proportion, each tail at α/2.

    Clopper & Pearson (1934): lower = Beta⁻¹(α/2; k, n − k + 1), upper = Beta⁻¹(1 − α/2; k + 1,
    n − k), with 0 and 1 at k = 0 and k = n: the one-sided bounds of
    :func:`rdpjax.rejection.binomial.clopper_pearson` at α/2 each.
    """
    return binomial.clopper_pearson(k, n, alpha / 2)


def tpr_at_fpr(in_scores: Any, out_scores: Any, fpr: float, *, alpha: float = 0.05):
    """TPR at a target FPR with exact intervals, the threshold certified on the out scores.

    The threshold is the (k+1)-th largest out score, k the largest count whose Clopper–Pearson
    upper bound on the FPR is ≤ ``fpr`` (k depends on n_out, ``fpr`` and α only); the
    classifier says "in" iff score > threshold. Both intervals are at 1 − α/2, so they hold
    jointly at 1 − α (module docstring). Cost: O(n log n).

    Args:
        in_scores: scores of the included canaries (1-D, finite, non-empty).
        out_scores: scores of the excluded ones.
        fpr: the target false-positive rate, in (0, 1).
        alpha: error probability of the two intervals together, in (0, 1).

    Returns:
        :class:`OperatingPoint`: the empirical point reached and its intervals.

    Raises:
        ValueError: naming the argument, as :func:`rdpjax.canaries.one_run`, or for ``fpr``
            outside (0, 1).

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> p = tpr_at_fpr(rng.normal(2, 1, 5000), rng.normal(0, 1, 5000), 0.01)
        >>> p.certified and p.fpr_interval[1] <= 0.01
        True
    """
    scores, bits = split(in_scores, out_scores)
    alpha = check_level(alpha, upper=1.0)
    if isinstance(fpr, bool) or not isinstance(fpr, int | float | np.floating):
        raise ValueError(f"fpr must be a number in (0, 1); got {fpr!r}")
    if not 0.0 < float(fpr) < 1.0:
        raise ValueError(f"fpr must be in (0, 1); got {fpr!r}")
    ins, outs = scores[bits == 1], np.sort(scores[bits == 0])[::-1]
    n_in, n_out = ins.size, outs.size
    k = fpr_count(n_out, float(fpr), alpha / 2)
    threshold = float(outs[k]) if k >= 0 else math.inf  # the (k+1)-th largest out score
    fp, tp = int((outs > threshold).sum()), int((ins > threshold).sum())
    return operating_point(tp, fp, n_in, n_out, k, float(fpr), alpha, threshold)


@dataclasses.dataclass(frozen=True)
class Auroc:
    """AUROC of canary scores with two intervals at 1 − α (module docstring).

    Attributes:
        value: the Mann–Whitney estimate Â (ties count ½).
        interval: Hoeffding's distribution-free interval, valid at every n (clipped to [0, 1]).
        delong: DeLong's asymptotic normal interval (clipped to [0, 1]).
        std_error: DeLong's standard error of Â.
        n_in, n_out, alpha: the sample sizes and level.
    """

    value: float
    interval: tuple[float, float]
    delong: tuple[float, float]
    std_error: float
    n_in: int
    n_out: int
    alpha: float

    def describe(self) -> str:
        """One line: the estimate and both intervals."""
        lo, hi = self.interval
        dlo, dhi = self.delong
        return (
            f"AUROC {self.value:.4f} [{lo:.4f}, {hi:.4f}] (Hoeffding; DeLong [{dlo:.4f}, "
            f"{dhi:.4f}])"
        )


def auroc(in_scores: Any, out_scores: Any, *, alpha: float = 0.05) -> Auroc:
    """The area under the ROC curve of "in iff score > t", with intervals at 1 − α.

    Â = (1/(n_in n_out)) Σ_{i,j} ψ(x_i, y_j), ψ = 1{x > y} + ½ 1{x = y}, computed from midranks
    of the pooled scores; DeLong's structural components V10_i = (1/n_out) Σ_j ψ(x_i, y_j) and
    V01_j = (1/n_in) Σ_i ψ(x_i, y_j) from within-side midranks (DeLong et al. 1988; the midrank
    form of Sun & Xu 2014, IEEE Signal Processing Letters 21); Var Â ≈ S10/n_in + S01/n_out. Cost:
    O(n log n).

    Args:
        in_scores: scores of the included canaries (1-D, finite, non-empty).
        out_scores: scores of the excluded ones.
        alpha: error probability of each interval, in (0, 1).

    Returns:
        :class:`Auroc`.

    Raises:
        ValueError: naming the argument, as :func:`rdpjax.canaries.one_run`.

    Example:
        >>> auroc([3.0, 4.0], [1.0, 2.0]).value
        1.0
    """
    scores, bits = split(in_scores, out_scores)
    alpha = check_level(alpha, upper=1.0)
    ins, outs = scores[bits == 1], scores[bits == 0]
    n_in, n_out = ins.size, outs.size
    ranks = stats.rankdata(np.concatenate([ins, outs]))  # midranks: ties count ½
    r_in, r_out = ranks[:n_in], ranks[n_in:]
    value = (r_in.sum() - n_in * (n_in + 1) / 2) / (n_in * n_out)  # Mann–Whitney U / (n_in n_out)
    v10 = (r_in - stats.rankdata(ins)) / n_out  # # out below each in score (ties ½)
    v01 = 1.0 - (r_out - stats.rankdata(outs)) / n_in  # # in above each out score (ties ½)
    s10 = v10.var(ddof=1) if n_in > 1 else 0.0
    s01 = v01.var(ddof=1) if n_out > 1 else 0.0
    se = math.sqrt(s10 / n_in + s01 / n_out)
    z = stats.norm.isf(alpha / 2)
    half = math.sqrt(math.log(2.0 / alpha) / (2.0 * min(n_in, n_out)))  # Hoeffding (1963)
    return Auroc(
        value=float(value),
        interval=(max(0.0, value - half), min(1.0, value + half)),
        delong=(max(0.0, value - z * se), min(1.0, value + z * se)),
        std_error=se,
        n_in=n_in,
        n_out=n_out,
        alpha=alpha,
    )
