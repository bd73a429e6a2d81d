"""The bets of the sequential set test: a set, a direction, ε and λ chosen from past pairs.

Before each batch of pairs, from the pairs before it only (so the bets are predictable, which
is all the validity of :mod:`rdpjax.rejection.betting` needs), each replication picks

* *a set*: for real outputs ``{v < t}``, ``{v ≥ t}`` and the two-sided ``{|v − c| ≥ t}``,
  ``{|v − c| < t}``, with c the pooled median so far and t at 31 pooled quantiles so far
  (midway between order statistics). For integer outputs (codes): the codes ranked by their
  past log ratio ``log((n_P + 1)/(n_Q + 1))``, the sets of the first k codes and their
  complements (codes not seen yet rank last), at most 31 values of k evenly spread;
* *a direction*: bet on ``P(S) − e^ε Q(S)`` (A = X, B = Y) or on ``Q(S) − e^ε P(S)``;
* *ε* from a grid per claim (:func:`epsilon_grid`), with the claim's δ(ε);
* *λ* by aGRAPA (Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
  betting", arXiv:2010.09686, §5.1: ``λ = μ̂/(σ̂² + μ̂²)``, the maximiser of a second-order
  expansion of the log growth ``E log(1 + λZ)``), truncated to ``[0, c/(e^ε + δ)]``, c = 0.9,
  and scaled by the strategy's fraction;
* among all these, the candidate with the largest expected log growth ``E log(1 + λZ)``.

The mean and variance of ``Z = 1_S(A) − e^ε 1_S(B) − δ`` and its growth are computed from the
past frequencies of the set on each side, each smoothed by one pseudo-count in and one out of
the set (Laplace's rule), rather than from the past Z's: A and B are independent, so the two
frequencies give Z's four-point law, and every candidate set is scored on the same counts.
Departure from the paper: aGRAPA updates λ after every observation from the past Z's; here
the bet is fixed for a batch (of at most ⌈n/8⌉ pairs after n) and uses the frequencies above.

Cost: O(R·n log n) a plan for sorting each side's past (O(R·n) for a caller that keeps it
sorted, :class:`SortedPast`); the pooled order statistics and counts are then found by
bisection, O(T log n), those of the distances to the median too, over their four monotone runs
(:mod:`rdpjax.rejection.splits`; merged below ``MERGE_BELOW`` outputs a side); O(R·T·E)
candidates (T ≤ 31 thresholds × 2 families × 2 sides × 2 directions, E ≤ 7 values of ε).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rdpjax.claims import Claim, hockey_stick
from rdpjax.rejection.splits import LEVELS, distance_splits, merged, plain, positions, value_splits

__all__ = ["Bets", "SortedPast", "epsilon_grid", "plan_bets"]

PRIOR = 1.0
"""Pseudo-count added to each side's count in and out of a set (Laplace's rule)."""
CAP = 0.9
"""c: λ ≤ c/(e^ε + δ), so one pair loses at most a fraction c of the wealth."""


def epsilon_grid(claim: Claim) -> tuple[np.ndarray, np.ndarray]:
    """The ε's a strategy chooses from and δ(ε) of the claim at each.

    Args:
        claim: a claim of a kind in ``SET_KINDS``.

    Returns:
        ``(epsilon, delta)``, float64 arrays of the same length.
    """
    if claim.kind == "gdp":
        mu = float(claim.params["mu"])
        eps = mu * np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0])
    else:
        e0 = float(claim.params["epsilon"])
        eps = e0 * np.array([0.0, 0.5, 1.0])
    eps = np.unique(eps)
    return eps, np.asarray(hockey_stick(claim, eps), np.float64)


@dataclasses.dataclass(frozen=True)
class Bets:
    """The bets of one batch, one per replication (arrays of shape ``(R,)``).

    Membership of an output v: family 0: ``v``, 1: ``|v − center|``, 2: the rank of code v in
    ``codes`` (``ranks``; unseen codes rank last); the set is ``{s < threshold}`` when ``below``
    else ``{s ≥ threshold}``; ``swap``: bet on ``Q(S) − e^ε P(S)``.
    """

    family: np.ndarray
    center: np.ndarray
    threshold: np.ndarray
    below: np.ndarray
    swap: np.ndarray
    epsilon: np.ndarray
    delta: np.ndarray
    lam: np.ndarray
    growth: np.ndarray
    codes: np.ndarray | None = None
    ranks: np.ndarray | None = None

    def rows(self, rows: np.ndarray) -> Bets:
        """The bets of some replications (every per-row field taken at ``rows``)."""
        fields = ((f.name, getattr(self, f.name)) for f in dataclasses.fields(self))
        return dataclasses.replace(
            self, **{k: v[rows] for k, v in fields if k != "codes" and v is not None}
        )


Family = tuple[int, np.ndarray, np.ndarray, np.ndarray]
"""(family, thresholds, counts of x below, counts of x' below), arrays of shape ``(R, T)``."""


def _code_families(px: np.ndarray, py: np.ndarray) -> tuple[list[Family], dict[str, np.ndarray]]:
    """Sets of the k codes of highest past ratio ``(n_P + 1)/(n_Q + 1)``, for about LEVELS k."""
    r = px.shape[0]
    codes = np.unique(np.concatenate([px.ravel(), py.ravel()]))
    c = codes.size
    rows = np.arange(r)[:, None] * c
    nx = np.bincount((rows + np.searchsorted(codes, px)).ravel(), minlength=r * c).reshape(r, c)
    ny = np.bincount((rows + np.searchsorted(codes, py)).ravel(), minlength=r * c).reshape(r, c)
    score = np.log((nx + PRIOR) / (ny + PRIOR))
    order = np.argsort(-score, axis=1, kind="stable")  # highest P/Q ratio first
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(c), (r, c)), axis=1)
    cx = np.cumsum(np.take_along_axis(nx, order, axis=1), axis=1)[:, :-1].astype(np.float64)
    cy = np.cumsum(np.take_along_axis(ny, order, axis=1), axis=1)[:, :-1].astype(np.float64)
    keep = positions(c) if c - 1 > LEVELS else np.arange(1, c)  # prefixes spread in rank
    thresholds = np.broadcast_to(keep - 0.5, (r, keep.size))
    return [(2, thresholds, cx[:, keep - 1], cy[:, keep - 1])], {"codes": codes, "ranks": ranks}


def _growth(
    p: np.ndarray, q: np.ndarray, eps: np.ndarray, delta: np.ndarray, scales: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The aGRAPA λ and E log(1 + λZ) when 1_S(A) ~ Bern(p), 1_S(B) ~ Bern(q) independently.

    For each strategy's fraction of the aGRAPA λ in ``scales``: a leading axis. What does not
    depend on the fraction is computed once; each value is the one a strategy's own call
    would give (the same operations, in the same order, on the same numbers).
    """
    with np.errstate(over="ignore", invalid="ignore"):  # e^ε = inf from ε ≈ 710: see below
        e = np.exp(eps)
        mean = p - e * q - delta
        var = p * (1 - p) + e * e * q * (1 - q)
        full = np.clip(mean / (var + mean * mean), 0.0, CAP / (e + delta))  # aGRAPA, §5.1
        # λ ≤ c/(e^ε + δ) is 0 where e^ε overflows: no stake, and no growth (not NaN).
        full = np.where(np.isfinite(e), full, 0.0)
        lam = full * scales.reshape(-1, *([1] * full.ndim))
        g = (
            p * (1 - q) * np.log1p(lam * (1 - delta))
            + (1 - p) * (1 - q) * np.log1p(-lam * delta)
            + (1 - p) * q * np.log1p(-lam * (e + delta))
            + p * q * np.log1p(lam * (1 - e - delta))
        )
    return lam, np.where((lam == 0) & np.isnan(g), 0.0, g)


def _best(
    families: list[Family], n: int, eps: np.ndarray, delta: np.ndarray, scales: tuple[float, ...]
) -> list[dict[str, np.ndarray]]:
    """The candidate of largest smoothed growth per row, over families, sets, sides and ε.

    One per strategy (``scales``), all scored together (:func:`_growth`).
    """
    r = families[0][2].shape[0]
    best: list[dict[str, np.ndarray]] = [{} for _ in scales]
    for family, thresholds, cx, cy in families:
        if cx.shape[1] == 0:  # one code seen so far: no set separates anything yet
            continue
        fx, fy = (cx + PRIOR) / (n + 2 * PRIOR), (cy + PRIOR) / (n + 2 * PRIOR)
        # axes: (R, T, below/above, direction, ε)
        fx = np.stack([fx, 1 - fx], axis=2)[..., None, None]
        fy = np.stack([fy, 1 - fy], axis=2)[..., None, None]
        p = np.concatenate([fx, fy], axis=3)  # mass of the betting side's own draw
        q = np.concatenate([fy, fx], axis=3)
        lams, gs = _growth(p, q, eps, delta, np.asarray(scales, np.float64))
        rows = np.arange(r)
        for j, (lam, g) in enumerate(zip(lams, gs, strict=True)):
            flat = g.reshape(r, -1)
            i = np.argmax(flat, axis=1)
            t_i, side, swap, e_i = np.unravel_index(i, g.shape[1:])
            cand = {
                "family": np.full(r, family),
                "threshold": thresholds[rows, t_i],
                "below": side == 0,
                "swap": swap == 1,
                "epsilon": eps[e_i],
                "delta": delta[e_i],
                "lam": lam.reshape(r, -1)[rows, i],
                "growth": flat[rows, i],
            }
            old = best[j]
            better = cand["growth"] > old["growth"] if old else np.ones(r, bool)
            best[j] = {k: np.where(better, v, old[k]) if old else v for k, v in cand.items()}
    for j, chosen in enumerate(best):
        if not chosen:
            zero, no = np.zeros(r), np.zeros(r, bool)
            chosen = {"family": np.full(r, families[0][0]), "threshold": zero, "below": no}
            chosen |= {"swap": no, "epsilon": zero, "delta": zero, "lam": zero, "growth": zero}
        chosen["lam"] = np.where(chosen["growth"] > 0, chosen["lam"], 0.0)  # no edge: no bet
        best[j] = chosen
    return best


def plan_bets(
    px: np.ndarray,
    py: np.ndarray,
    eps: np.ndarray,
    delta: np.ndarray,
    discrete: bool,
    scales: tuple[float, ...] = (1.0,),
    *,
    rows_sorted: bool = False,
) -> list[Bets]:
    """Choose each replication's bet for the next batch from its past pairs only.

    Args:
        px: ``(R, n)`` past outputs on x (n ≥ 1).
        py: ``(R, n)`` past outputs on x'.
        eps: the ε grid (:func:`epsilon_grid`).
        delta: δ(ε) of the claim at each ε.
        discrete: integer codes (sets of codes) or real outputs (threshold sets).
        scales: one strategy per entry, betting that fraction of the aGRAPA λ.
        rows_sorted: real outputs whose rows are already sorted (a caller that keeps its past
            sorted as it grows, :class:`SortedPast`); the bets only read the past as a multiset.

    Returns:
        One :class:`Bets` per scale: the candidate with the largest smoothed expected log
        growth per row (the sets are counted once for all scales).
    """
    r, n = px.shape
    extra: dict[str, np.ndarray] = {}
    if discrete:
        families, extra = _code_families(px, py)
        center = np.zeros(r)
    else:
        sx, sy = (px, py) if rows_sorted else (np.sort(px, axis=1), np.sort(py, axis=1))
        *values, center = value_splits(sx, sy)  # center: the median of the 2n values
        families = [(0, *values), (1, *distance_splits(sx, sy, center))]
    return [
        Bets(center=center, **chosen, **extra) for chosen in _best(families, n, eps, delta, scales)
    ]


class SortedPast:
    """One replication's past outputs of each side kept sorted as they grow (real outputs).

    :meth:`update` sorts only the outputs added since the last call and merges them in (a
    linear merge), so planning every time the past has grown by 1/8 costs O(n) a plan rather
    than a sort's O(n log n). A caller that has sorted those outputs already (one batch since
    the last call) hands the sorted copies to :meth:`add`, and they are merged in as they are.
    """

    def __init__(self) -> None:
        self.x, self.y, self.size = np.empty((1, 0)), np.empty((1, 0)), 0
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []
        # The sorted pasts as merged: float32 while every output was (half the bytes to merge;
        # a float32 converts to float64 exactly and in order, so the rows are the same).
        self.kept = (np.empty((1, 0), np.float32), np.empty((1, 0), np.float32))

    def add(self, sx: np.ndarray, sy: np.ndarray) -> None:
        """The next outputs of each side, sorted (1-D): merged in by the next :meth:`update`."""
        self.runs.append((sx, sy))

    def update(self, px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sorted ``(1, n)`` rows of the pasts ``px``, ``py`` (1-D, extending the last ones).

        The outputs :meth:`add` gave since the last call are used where they are one batch,
        all of ``px[size:]`` and ``py[size:]``, of their dtypes and without −0.0 (then they are
        ``np.sort`` of those outputs bit for bit); else those outputs are sorted here.
        """
        new = slice(self.size, px.size)
        runs, self.runs = self.runs, []
        sx, sy = runs[0] if len(runs) == 1 else (None, None)
        if not (_same_sorted(sx, px[new]) and _same_sorted(sy, py[new])):
            sx, sy = np.sort(px[new]), np.sort(py[new])
        self.kept = _merged_kept(self.kept[0], sx), _merged_kept(self.kept[1], sy)
        self.x, self.y = (k.astype(np.float64, copy=False) for k in self.kept)
        self.size = px.size
        return self.x, self.y


def _merged_kept(kept: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``kept`` and the sorted ``s`` merged (:func:`merged`), float32 if both are, else float64."""
    dtype = np.float32 if kept.dtype == s.dtype == np.float32 else np.float64
    return merged(kept.astype(dtype, copy=False), s.astype(dtype, copy=False)[None])


def _same_sorted(s: np.ndarray | None, v: np.ndarray) -> bool:
    """Whether ``s`` (sorted) is ``np.sort(v)`` bit for bit when it holds the same values."""
    return s is not None and s.size == v.size and s.dtype == v.dtype and plain(s)
