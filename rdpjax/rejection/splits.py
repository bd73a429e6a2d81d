"""Split points of the bets' pooled past, and each side's count below them.

The thresholds of :mod:`rdpjax.rejection.bets`' real-valued set families: ``{v < t}`` with t
halfway between the k-th and (k+1)-th values of the pooled past of both sides
(:func:`value_splits`), and ``{|v − c| < t}`` with the same of the distances to the pooled
median c (:func:`distance_splits`), at about :data:`LEVELS` split points k
(:func:`positions`). The order statistics come from the sides' sorted rows by bisection,
without merging them (:func:`order_statistics`, :func:`runs_order_statistics`), or by a merge
where that is quicker (:data:`MERGE_BELOW`) or needed for exact values (:func:`plain`). Each
set's counts are those of the set itself (:func:`below`), as the bet reads them.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "LEVELS",
    "MERGE_BELOW",
    "below",
    "distance_runs",
    "distance_splits",
    "merged",
    "order_statistics",
    "plain",
    "positions",
    "runs_order_statistics",
    "sorted_distances",
    "split_counts",
    "value_splits",
]

LEVELS = 31
"""Thresholds per set family: pooled quantiles of the past at levels k/32."""
MERGE_BELOW = 1 << 15
"""Past outputs a side below which the distances to the median are merged, not bisected."""


@functools.lru_cache(maxsize=256)
def positions(total: int) -> np.ndarray:
    """Split points ``k`` (1 ≤ k < total) of a sorted pooled sample: about LEVELS of them.

    Kept for each ``total`` (read-only: the plans of a test ask for the same ones again).
    """
    k = np.unique(np.round(np.arange(1, LEVELS + 1) * total / (LEVELS + 1)).astype(np.int64))
    k = k[(k >= 1) & (k < total)]
    k.flags.writeable = False
    return k


def merged(sx: np.ndarray, sy: np.ndarray) -> np.ndarray:
    """Two ``(R, ·)`` arrays of sorted rows merged row by row (sorted, ``sx``'s first among ties).

    A stable sort of two sorted runs is numpy's timsort finding the runs: one linear merge
    (in place, in the concatenation).
    """
    out = np.concatenate([sx, sy], axis=1)
    out.sort(axis=1, kind="stable")
    return out


def order_statistics(a: np.ndarray, b: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, ...]:
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


def split_counts(sx: np.ndarray, sy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: thresholds between pooled order statistics and the counts of each side below.

    ``sx``, ``sy``: each side's past, rows sorted. At the split points ``k``
    (:func:`positions`) of the pooled sample: the threshold ``t`` halfway between its k-th and
    (k+1)-th values (:func:`order_statistics`: the values of a sort of the pooled sample,
    without it), and each side's count of values below ``t`` (:func:`below`; ``k`` in all
    unless values tie at the split).
    """
    thresholds, cx, cy, _ = value_splits(sx, sy, median=False)
    return thresholds, cx, cy


def value_splits(sx: np.ndarray, sy: np.ndarray, median: bool = True) -> tuple[np.ndarray, ...]:
    """:func:`split_counts` of the values and the pooled median per row, in one bisection.

    The median of the 2n values is halfway between the n-th and the next (``nan`` when not
    ``median``); each split point is found independently of the others, so adding ``n`` to
    them leaves the rest unchanged.
    """
    r, n = sx.shape
    k = positions(2 * n)
    thresholds, center = np.empty((r, k.size)), np.full(r, np.nan)
    cx, cy = np.empty((r, k.size)), np.empty((r, k.size))
    both = np.append(k, n) if median else k
    for row in range(r):
        last, after, _ = order_statistics(sx[row], sy[row], both)
        thresholds[row] = 0.5 * (last[: k.size] + after[: k.size])
        cx[row], cy[row] = below(sx[row], thresholds[row]), below(sy[row], thresholds[row])
        if median:
            center[row] = 0.5 * (last[-1] + after[-1])
    return thresholds, cx, cy, center


def below(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``#{v < t}`` in the sorted row ``s`` for each threshold: the set's count, as bet on.

    Not the x's among the first k in the pooled order: at a tie (the k-th and (k+1)-th
    values equal, so ``t`` is that value) the rank puts some of the tied values below while
    the set ``{v < t}`` holds none of them, and a plan scored on the ranks bet on a set it had
    never seen separate anything (a constant output lost about a tenth of the wealth a pair).
    """
    return np.searchsorted(s, t, "left").astype(np.float64)


def sorted_distances(s: np.ndarray, center: np.ndarray) -> np.ndarray:
    """``|s − c|`` of sorted rows, sorted: the two monotone runs either side of c, merged."""
    out = np.empty_like(s)
    for row in range(s.shape[0]):
        i = np.searchsorted(s[row], center[row])
        below = center[row] - s[row, :i][::-1]  # = |v − c| exactly, increasing
        out[row] = merged(below[None], (s[row, i:] - center[row])[None])[0]
    return out


def plain(s: np.ndarray) -> bool:
    """A sorted row of finite numbers without −0.0: its equal values are equal bit for bit."""
    if s.size == 0:
        return True
    if not (np.isfinite(s[0]) and np.isfinite(s[-1])):  # sorted: NaN last
        return False
    zeros = s[np.searchsorted(s, 0.0, "left") : np.searchsorted(s, 0.0, "right")]
    return not np.signbit(zeros).any()


def distance_runs(sx: np.ndarray, sy: np.ndarray, c: np.floating) -> tuple[np.ndarray, ...]:
    """``|v − c|`` of two sorted rows as four increasing runs in one buffer, and its cuts.

    x below c (reversed), x above, x' below (reversed), x' above; each distance computed as in
    :func:`sorted_distances` (``c − v`` below, ``v − c`` above, with ``c`` a float64).
    """
    ix, iy, nx = int(np.searchsorted(sx, c)), int(np.searchsorted(sy, c)), sx.size
    d = np.empty(nx + sy.size)
    np.subtract(c, sx[:ix][::-1], out=d[:ix])
    np.subtract(sx[ix:], c, out=d[ix:nx])
    np.subtract(c, sy[:iy][::-1], out=d[nx : nx + iy])
    np.subtract(sy[iy:], c, out=d[nx + iy :])
    return d, np.array([0, ix, nx, nx + iy, d.size])


def runs_order_statistics(d: np.ndarray, cuts: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`order_statistics` of the pooled runs ``d[cuts[j]:cuts[j+1]]`` (x: j < 2).

    The k-th value ``v`` is the least value of any run with at least k values ≤ it: bisected
    in each run at once (``searchsorted`` counts across the runs), then the least of the four;
    the (k+1)-th is ``v`` again or the least value above it. In the stable pooled order the
    x's among the first k are those below ``v`` and, of those equal to it, at most the
    ``k − #below`` that fit. Exact where equal values are equal bit for bit (no −0.0 beside
    0.0, no NaN: :func:`plain`), so the values are those of a merge.
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


def distance_splits(sx: np.ndarray, sy: np.ndarray, center: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`split_counts` of the distances ``|v − c|`` to each row's center.

    The thresholds: below :data:`MERGE_BELOW` outputs a side, or for outputs that are not
    float64 or hold −0.0 or non-finite values, by merging the sorted distances
    (:func:`sorted_distances`, of each side's dtype); else without merging, by bisection over
    their four monotone runs (:func:`runs_order_statistics`): the same values. The counts of
    ``{|v − c| < t}``, on those runs in float64, as :func:`log_multipliers` computes them.
    """
    r, n = sx.shape
    wide = sx.dtype == sy.dtype == np.float64
    merge = n < MERGE_BELOW or not wide or not all(plain(s) for s in (*sx, *sy))
    k = positions(2 * n)
    thresholds, cx, cy = np.empty((r, k.size)), np.empty((r, k.size)), np.empty((r, k.size))
    if merge:
        distances = (sorted_distances(sx, center), sorted_distances(sy, center))
        thresholds[:] = split_counts(*distances)[0]
    for row in range(r):
        d, cuts = distance_runs(sx[row], sy[row], center[row])
        if not merge:
            last, after, _ = runs_order_statistics(d, cuts, k)
            thresholds[row] = 0.5 * (last + after)
        t = thresholds[row]
        runs = [below(d[a:b], t) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        cx[row], cy[row] = runs[0] + runs[1], runs[2] + runs[3]  # each run is increasing
    return thresholds, cx, cy
