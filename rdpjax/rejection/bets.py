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
(merged instead below :data:`MERGE_BELOW` outputs a side, where a merge is quicker); O(R·T·E)
candidates (T ≤ 31 thresholds × 2 families × 2 sides × 2 directions, E ≤ 7 values of ε).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from rdpjax.claims import Claim, hockey_stick

__all__ = ["Bets", "SortedPast", "epsilon_grid", "plan_bets"]

LEVELS = 31
"""Thresholds per set family: pooled quantiles of the past at levels k/32."""
PRIOR = 1.0
"""Pseudo-count added to each side's count in and out of a set (Laplace's rule)."""
CAP = 0.9
"""c: λ ≤ c/(e^ε + δ), so one pair loses at most a fraction c of the wealth."""
MERGE_BELOW = 1 << 15
"""Past outputs a side below which the distances to the median are merged, not bisected."""


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


@functools.lru_cache(maxsize=256)
def _positions(total: int) -> np.ndarray:
    """Split points ``k`` (1 ≤ k < total) of a sorted pooled sample: about LEVELS of them.

    Kept for each ``total`` (read-only: the plans of a test ask for the same ones again).
    """
    k = np.unique(np.round(np.arange(1, LEVELS + 1) * total / (LEVELS + 1)).astype(np.int64))
    k = k[(k >= 1) & (k < total)]
    k.flags.writeable = False
    return k


Family = tuple[int, np.ndarray, np.ndarray, np.ndarray]
"""(family, thresholds, counts of x below, counts of x' below), arrays of shape ``(R, T)``."""


def _merged(sx: np.ndarray, sy: np.ndarray) -> np.ndarray:
    """Two ``(R, ·)`` arrays of sorted rows merged row by row (sorted, ``sx``'s first among ties).

    A stable sort of two sorted runs is numpy's timsort finding the runs: one linear merge
    (in place, in the concatenation).
    """
    out = np.concatenate([sx, sy], axis=1)
    out.sort(axis=1, kind="stable")
    return out


def _order_statistics(a: np.ndarray, b: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, ...]:
    """The k-th and (k+1)-th values of two sorted arrays pooled, and the a's among the first k.

    In the stable pooled order (a's before b's among equal values), for each k. The a's among
    the first k are the largest ``i`` with ``a[i−1] ≤ b[k−i]`` (``a[i−1]`` then has at most
    ``k − i`` b's below it, so it is among the first k), found for every k at once by
    bisection: O(T log n) for T values of k, with no merge of the two arrays.
    """
    na, nb = a.size, b.size
    lo, hi = np.maximum(0, k - nb), np.minimum(k, na)
    while np.any(lo < hi):
        mid = (lo + hi + 1) // 2  # lo < mid ≤ hi where lo < hi
        inside = (k - mid >= nb) | (a[np.maximum(mid - 1, 0)] <= b[np.minimum(k - mid, nb - 1)])
        lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid - 1)
    i, j = lo, k - lo  # a's and b's among the first k
    last = np.maximum(np.where(i > 0, a[np.maximum(i - 1, 0)], -np.inf),
                      np.where(j > 0, b[np.maximum(j - 1, 0)], -np.inf))  # fmt: skip
    after = np.minimum(np.where(i < na, a[np.minimum(i, na - 1)], np.inf),
                       np.where(j < nb, b[np.minimum(j, nb - 1)], np.inf))  # fmt: skip
    return last, after, i


def _split_counts(sx: np.ndarray, sy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: thresholds between pooled order statistics and the counts of each side below.

    ``sx``, ``sy``: each side's past, rows sorted. At the split points ``k``
    (:func:`_positions`) of the pooled sample in its stable order (x before x' among equal
    values): the threshold halfway between its k-th and (k+1)-th values, the number ``c_x`` of
    x's among its first k, and ``k − c_x`` (:func:`_order_statistics`: the values and counts of
    a stable argsort of the pooled sample, without it).
    """
    thresholds, cx, cy, _ = _value_splits(sx, sy, median=False)
    return thresholds, cx, cy


def _value_splits(sx: np.ndarray, sy: np.ndarray, median: bool = True) -> tuple[np.ndarray, ...]:
    """:func:`_split_counts` of the values and the pooled median per row, in one bisection.

    The median of the 2n values is halfway between the n-th and the next (``nan`` when not
    ``median``); each split point is found independently of the others, so adding ``n`` to
    them leaves the rest unchanged.
    """
    r, n = sx.shape
    k = _positions(2 * n)
    thresholds, cx, center = np.empty((r, k.size)), np.empty((r, k.size)), np.full(r, np.nan)
    both = np.append(k, n) if median else k
    for row in range(r):
        last, after, i = _order_statistics(sx[row], sy[row], both)
        thresholds[row], cx[row] = 0.5 * (last[: k.size] + after[: k.size]), i[: k.size]
        if median:
            center[row] = 0.5 * (last[-1] + after[-1])
    return thresholds, cx, k[None, :] - cx, center


def _sorted_distances(s: np.ndarray, center: np.ndarray) -> np.ndarray:
    """``|s − c|`` of sorted rows, sorted: the two monotone runs either side of c, merged."""
    out = np.empty_like(s)
    for row in range(s.shape[0]):
        i = np.searchsorted(s[row], center[row])
        below = center[row] - s[row, :i][::-1]  # = |v − c| exactly, increasing
        out[row] = _merged(below[None], (s[row, i:] - center[row])[None])[0]
    return out


def _plain(s: np.ndarray) -> bool:
    """A sorted row of finite numbers without −0.0: its equal values are equal bit for bit."""
    if s.size == 0:
        return True
    if not (np.isfinite(s[0]) and np.isfinite(s[-1])):  # sorted: NaN last
        return False
    zeros = s[np.searchsorted(s, 0.0, "left") : np.searchsorted(s, 0.0, "right")]
    return not np.signbit(zeros).any()


def _distance_runs(sx: np.ndarray, sy: np.ndarray, c: np.floating) -> tuple[np.ndarray, ...]:
    """``|v − c|`` of two sorted rows as four increasing runs in one buffer, and its cuts.

    x below c (reversed), x above, x' below (reversed), x' above; each distance computed as in
    :func:`_sorted_distances` (``c − v`` below, ``v − c`` above, with ``c`` a float64).
    """
    ix, iy, nx = int(np.searchsorted(sx, c)), int(np.searchsorted(sy, c)), sx.size
    d = np.empty(nx + sy.size)
    np.subtract(c, sx[:ix][::-1], out=d[:ix])
    np.subtract(sx[ix:], c, out=d[ix:nx])
    np.subtract(c, sy[:iy][::-1], out=d[nx : nx + iy])
    np.subtract(sy[iy:], c, out=d[nx + iy :])
    return d, np.array([0, ix, nx, nx + iy, d.size])


def _runs_order_statistics(
    d: np.ndarray, cuts: np.ndarray, k: np.ndarray
) -> tuple[np.ndarray, ...]:
    """:func:`_order_statistics` of the pooled runs ``d[cuts[j]:cuts[j+1]]`` (x: j < 2).

    The k-th value ``v`` is the least value of any run with at least k values ≤ it: bisected
    in each run at once (``searchsorted`` counts across the runs), then the least of the four;
    the (k+1)-th is ``v`` again or the least value above it. In the stable pooled order the
    x's among the first k are those below ``v`` and, of those equal to it, at most the
    ``k − #below`` that fit. Exact where equal values are equal bit for bit (no −0.0 beside
    0.0, no NaN: :func:`_plain`), so the values are those of a merge.
    """
    runs = [d[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]

    def counts(v: np.ndarray, side: str) -> np.ndarray:
        return np.stack([np.searchsorted(run, v, side) for run in runs])

    start, size, last = cuts[:-1, None], np.diff(cuts)[:, None], d.size - 1
    lo = np.zeros((size.size, k.size), np.int64)
    hi = np.broadcast_to(size, lo.shape)
    for _ in range(int(size.max()).bit_length()):  # the least index with ≥ k values ≤ it
        mid = (lo + hi) // 2
        enough = counts(d[np.minimum(start + mid, last)].ravel(), "right").sum(axis=0)
        enough = enough.reshape(mid.shape) >= k
        lo, hi = np.where(enough, lo, np.minimum(mid + 1, hi)), np.where(enough, mid, hi)
    nth = np.where(lo < size, d[np.minimum(start + lo, last)], np.inf).min(axis=0)
    below, upto = counts(nth, "left"), counts(nth, "right")
    above = np.where(upto < size, d[np.minimum(start + upto, last)], np.inf).min(axis=0)
    after = np.where(upto.sum(axis=0) > k, nth, above)
    below_x = below[:2].sum(axis=0)
    cx = below_x + np.minimum(upto[:2].sum(axis=0) - below_x, k - below.sum(axis=0))
    return nth, after, cx


def _distance_splits(sx: np.ndarray, sy: np.ndarray, center: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`_split_counts` of the distances ``|v − c|`` to each row's center.

    Below :data:`MERGE_BELOW` outputs a side, or for outputs that are not float64 or hold −0.0
    or non-finite values, by merging the sorted distances (:func:`_sorted_distances`, of each
    side's dtype); else without merging, by bisection over their four monotone runs
    (:func:`_runs_order_statistics`): the same values and counts.
    """
    r, n = sx.shape
    wide = sx.dtype == sy.dtype == np.float64
    if n < MERGE_BELOW or not wide or not all(_plain(s) for s in (*sx, *sy)):
        return _split_counts(_sorted_distances(sx, center), _sorted_distances(sy, center))
    k = _positions(2 * n)
    thresholds, cx = np.empty((r, k.size)), np.empty((r, k.size))
    for row in range(r):
        runs = _distance_runs(sx[row], sy[row], center[row])
        last, after, cx[row] = _runs_order_statistics(*runs, k)
        thresholds[row] = 0.5 * (last + after)
    return thresholds, cx, k[None, :] - cx


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
    keep = _positions(c) if c - 1 > LEVELS else np.arange(1, c)  # prefixes spread in rank
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
    e = np.exp(eps)
    mean = p - e * q - delta
    var = p * (1 - p) + e * e * q * (1 - q)
    full = np.clip(mean / (var + mean * mean), 0.0, CAP / (e + delta))  # aGRAPA, §5.1
    lam = full * scales.reshape(-1, *([1] * full.ndim))
    g = (
        p * (1 - q) * np.log1p(lam * (1 - delta))
        + (1 - p) * (1 - q) * np.log1p(-lam * delta)
        + (1 - p) * q * np.log1p(-lam * (e + delta))
        + p * q * np.log1p(lam * (1 - e - delta))
    )
    return lam, g


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
        *values, center = _value_splits(sx, sy)  # center: the median of the 2n values
        families = [(0, *values), (1, *_distance_splits(sx, sy, center))]
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
    """``kept`` and the sorted ``s`` merged (:func:`_merged`), float32 if both are, else float64."""
    dtype = np.float32 if kept.dtype == s.dtype == np.float32 else np.float64
    return _merged(kept.astype(dtype, copy=False), s.astype(dtype, copy=False)[None])


def _same_sorted(s: np.ndarray | None, v: np.ndarray) -> bool:
    """Whether ``s`` (sorted) is ``np.sort(v)`` bit for bit when it holds the same values."""
    return s is not None and s.size == v.size and s.dtype == v.dtype and _plain(s)
