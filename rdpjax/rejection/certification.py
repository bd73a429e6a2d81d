"""Choose candidate rejection sets on the selection draws; certify them on the others.

**Candidates.** For the direction "P over Q" the cells are ordered by score (largest first)
and each prefix ``S_k`` is a likelihood-ratio set of the selection's estimate; "Q over P"
orders them the other way and swaps the roles of P and Q. For every prefix the selection
predicts the certified statistic it would give: the selection's smoothed relative frequencies
times the certification sizes, passed through the same Clopper–Pearson bounds the certification
uses. The best prefix of each direction is the candidate. (Hedging with more candidates a
direction, at 4 or 10 times smaller and larger Q-mass, lowered the mean ε lower bound at
n = 10³ and 10⁴ on N(1,1) vs N(0,1): the Bonferroni price exceeded what the hedge won; see
``benchmarks/calibration/rejection_sets.py``.)

**Certification.** With J candidates in all, each gets ``α/J``, split over its two one-sided
bounds: ``P(S) ≥ p_lo`` and ``Q(S) ≤ q_hi`` each at ``α/(2J)`` (:mod:`.binomial`). By the union
bound all 2J statements hold together with probability ≥ 1 − α, whatever the selection chose,
because the certification draws are independent of it. Then, for every candidate at once:

* the test that rejects on S has type I error ``a ≤ q_hi`` and type II ``b ≤ 1 − p_lo``, a
  certified point of the trade-off curve (Dong, Roth, Su, arXiv:1905.02383v3, Def. 2.1);
* ``ε(δ) ≥ log((p_lo − δ)/q_hi)``, since (ε, δ)-DP needs ``P(S) ≤ e^ε Q(S) + δ``;
* ``μ ≥ Φ⁻¹(p_lo) − Φ⁻¹(q_hi)``, since μ-GDP needs ``P(S) ≤ 1 − G_μ(Q(S)) = Φ(Φ⁻¹(Q(S)) + μ)``
  (ibid. eq. (4)), which is increasing in Q(S);
* a claim with trade-off function f is refuted when ``p_lo > 1 − f(q_hi)``
  (:func:`rdpjax.claims.max_power`; ``1 − f`` is non-decreasing, so the true masses break it).

The reported lower bounds are the largest over the candidates; they, the points and the verdict
hold simultaneously at 1 − α. Host numpy, O(J · C) for C cells.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rdpjax.claims import max_power
from rdpjax.rejection.binomial import clopper_pearson

__all__ = ["Candidate", "certify", "choose_candidates", "predicted"]


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A rejection set: a union of cells, and which law it is evidence for.

    Attributes:
        cells: bool mask over the cells.
        forward: True for "P over Q" (the set is likelier under P, the law on x); False for
            "Q over P", where the roles of P and Q are swapped in every statement.
    """

    cells: np.ndarray
    forward: bool


def _objective(lo: np.ndarray, hi: np.ndarray, target: str, delta: float) -> np.ndarray:
    """The statistic a set gives from ``lo`` ≤ its mass under the favoured law, ``hi`` ≥ other's."""
    from scipy import special  # here, not at import: `import rdpjax` leaves scipy unloaded

    with np.errstate(divide="ignore", invalid="ignore"):
        if target == "mu":
            out = special.ndtri(lo) - special.ndtri(hi)
        else:
            out = np.log(lo - delta) - np.log(hi)
    return np.where(np.isnan(out), -np.inf, out)


PESSIMISM = {"mu": 2.0, "epsilon": 0.0}
"""Standard errors of the selection's estimate by which a set's predicted masses are moved
against it (favoured mass down, other up) before predicting, per target: for μ, sets the
selection barely saw are then not chosen on luck. Measured on N(1,1) vs N(0,1) at
n = 10³ … 10⁶ (0, 0.5, 1, 2): 2 gave the largest mean μ bound at 10⁴ … 10⁶ (0.99 against
0.91 without at 10⁶); for ε at small δ, where the best sets are the barely seen tails, 0 did."""


def predicted(
    p_fav: np.ndarray, p_other: np.ndarray, n: tuple[int, int], level: float, *, target: str,
    delta: float, m: tuple[float, float] | None = None,
) -> np.ndarray:  # fmt: skip
    """The statistic each set would give at certification, predicted from the selection.

    Args:
        p_fav: each set's estimated mass under the favoured law.
        p_other: the same under the other law.
        n: certification sizes (favoured, other).
        level: each one-sided bound's level at certification.
        target: ``"epsilon"`` (ε at ``delta``) or ``"mu"``.
        delta: the δ for ``target="epsilon"``.
        m: selection sizes (favoured, other): the masses are first moved :data:`PESSIMISM`
            standard errors (for ``target``) against the set.
    """
    if m is not None:
        z = PESSIMISM[target]
        p_fav = p_fav - z * np.sqrt(np.clip(p_fav * (1 - p_fav), 0, None) / m[0])
        p_other = p_other + z * np.sqrt(np.clip(p_other * (1 - p_other), 0, None) / m[1])
    c_fav = np.round(np.clip(p_fav, 0.0, 1.0) * n[0])
    c_other = np.round(np.clip(p_other, 0.0, 1.0) * n[1])
    lo, _ = clopper_pearson(c_fav, n[0], level)
    _, hi = clopper_pearson(c_other, n[1], level)
    return _objective(lo, hi, target, delta)


def choose_candidates(
    scores: np.ndarray, prob_p: np.ndarray, prob_q: np.ndarray, n: tuple[int, int], *,
    alpha: float, both_directions: bool, target: str, delta: float,
    m: tuple[float, float] | None = None,
) -> list[Candidate]:  # fmt: skip
    """The candidate sets (one a direction) from the selection's estimate per cell.

    Args:
        scores: estimated log ratio per cell (:func:`rdpjax.rejection.cells.cell_scores`).
        prob_p: estimated cell probabilities under P.
        prob_q: the same under Q.
        n: certification draws per side (P, Q).
        alpha: the family-wise level the certification will use.
        both_directions: also choose a set favouring Q.
        target: what the sets are chosen to maximize: ``"epsilon"`` (at ``delta``) or ``"mu"``.
        delta: the δ of ``target="epsilon"``.
        m: selection draws per side (P, Q), for :func:`predicted`'s pessimism.
    """
    directions = (True, False) if both_directions else (True,)
    level = alpha / (2 * len(directions))
    out: list[Candidate] = []
    for forward in directions:
        order = np.argsort(-scores if forward else scores, kind="stable")
        fav, other = (prob_p, prob_q) if forward else (prob_q, prob_p)
        nf, no = (n[0], n[1]) if forward else (n[1], n[0])
        p_fav, mass = np.cumsum(fav[order]), np.cumsum(other[order])
        ms = None if m is None else ((m[0], m[1]) if forward else (m[1], m[0]))
        value = predicted(p_fav, mass, (nf, no), level, target=target, delta=delta, m=ms)
        if not np.any(np.isfinite(value)):
            continue
        cells = np.zeros(scores.size, bool)
        cells[order[: int(np.argmax(value)) + 1]] = True
        out.append(Candidate(cells=cells, forward=forward))
    return out


@dataclasses.dataclass(frozen=True)
class Certified:
    """What one candidate certifies (every number holds simultaneously with the others)."""

    forward: bool
    count_fav: int
    count_other: int
    fav_lower: float
    other_upper: float
    epsilon: float
    mu: float
    refutes: bool


def certify(
    candidates: list[Candidate], counts_p: np.ndarray, counts_q: np.ndarray, *,
    alpha: float, delta: float, claim=None,
) -> list[Certified]:  # fmt: skip
    """Certify each candidate on the certification counts per cell, simultaneously at 1 − α."""
    if not candidates:
        return []
    level = alpha / (2 * len(candidates))
    n_p, n_q = int(counts_p.sum()), int(counts_q.sum())
    out = []
    for cand in candidates:
        kp, kq = int(counts_p[cand.cells].sum()), int(counts_q[cand.cells].sum())
        k_fav, n_fav, k_other, n_other = (kp, n_p, kq, n_q) if cand.forward else (kq, n_q, kp, n_p)
        lo = float(clopper_pearson(k_fav, n_fav, level)[0])
        hi = float(clopper_pearson(k_other, n_other, level)[1])
        refutes = claim is not None and bool(lo > float(max_power(claim, hi)))
        out.append(
            Certified(
                forward=cand.forward,
                count_fav=k_fav,
                count_other=k_other,
                fav_lower=lo,
                other_upper=hi,
                epsilon=float(_objective(np.array(lo), np.array(hi), "epsilon", delta)),
                mu=float(_objective(np.array(lo), np.array(hi), "mu", 0.0)),
                refutes=refutes,
            )
        )
    return out
