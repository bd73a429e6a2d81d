"""The bets' order statistics found without merging are those of the merges, bit for bit, and
each candidate set's counts are those of the set the bets place (counted directly).

Issue 52: ``plan_bets`` finds the distance family's split points by bisection over four
monotone runs (``_runs_order_statistics``) rather than by merging the sorted distances, finds
the median with the value family's split points, and ``SortedPast`` merges in the sorted
batches the test has already made. The references here are the merges they replace.
"""

import numpy as np
import pytest

from rdpjax.rejection import bets as B
from rdpjax.rejection import splits as S


def _counted(sx, sy, thresholds, score):
    """Each side's count of ``score(v) < t`` at each threshold, by direct comparison: the
    count of the set that :func:`rdpjax.rejection.bets.log_multipliers` bets on."""

    def side(s):
        return np.stack([np.sum(score(s[row])[:, None] < thresholds[row], axis=0)
                         for row in range(s.shape[0])]).astype(np.float64)  # fmt: skip

    return side(sx), side(sy)


def _old_distance_splits(sx, sy, center):
    """Before issue 52: the distances of each side sorted by merging, then split; each set
    counted directly (its distances as the bets compute them, ``|v − c|``)."""
    split = S.split_counts(S.sorted_distances(sx, center), S.sorted_distances(sy, center))
    rows = [lambda v, c=c: np.abs(v - c) for c in center]
    counts = [_counted(sx[i : i + 1], sy[i : i + 1], split[0][i : i + 1], rows[i])
              for i in range(len(rows))]  # fmt: skip
    cx, cy = (np.concatenate([c[j] for c in counts]) for j in (0, 1))
    return split[0], cx, cy


def _old_value_splits(sx, sy):
    """Before issue 52: the median by its own bisection, the value splits by theirs; each set
    ``{v < t}`` counted directly."""
    r, n = sx.shape
    k = S.positions(2 * n)
    thresholds, center = np.empty((r, k.size)), np.empty(r)
    for row in range(r):
        nth, after, _ = S.order_statistics(sx[row], sy[row], np.array([n]))
        center[row] = 0.5 * (nth[0] + after[0])
        last, after, _ = S.order_statistics(sx[row], sy[row], k)
        thresholds[row] = 0.5 * (last + after)
    return thresholds, *_counted(sx, sy, thresholds, lambda v: v), center


def _draw(rng, kind, shape):
    """Real outputs, continuous or with many ties (and no −0.0), float64 or float32."""
    if kind == "normal":
        return rng.normal(rng.uniform(-1, 1), rng.uniform(0.1, 3), shape)
    if kind == "rounded":  # discrete-valued reals; + 0.0 turns −0.0 into 0.0
        return np.round(rng.normal(rng.uniform(-1, 1), 1, shape), rng.integers(0, 3)) + 0.0
    if kind == "few":
        return rng.integers(-3, 4, shape).astype(np.float64) * 0.5
    if kind == "constant":
        return np.full(shape, 0.25)
    return rng.normal(0.3, 1, shape).astype(np.float32)  # the merge (of float32 distances)


def _assert_same(a, b):
    for u, v in zip(a, b, strict=True):
        assert u.dtype == v.dtype and np.array_equal(u, v, equal_nan=True)
        assert np.array_equal(np.signbit(u), np.signbit(v))


@pytest.mark.parametrize("kind", ["normal", "rounded", "few", "constant", "float32"])
def test_distance_splits_by_bisection_are_those_of_the_merge(monkeypatch, kind):
    rng = np.random.default_rng(list("nrfcx").index(kind[0]) if kind[0] in "nrfcx" else 9)
    monkeypatch.setattr(S, "MERGE_BELOW", 0)  # the bisection at every size
    for trial in range(40):
        n = int(rng.choice([1, 2, 3, 5, 17, 64, 100, 1000, 4097]))
        r = int(rng.integers(1, 4))
        sx = np.sort(_draw(rng, kind, (r, n)), axis=1)
        sy = np.sort(_draw(rng, kind, (r, n)) + (0.5 if trial % 2 else 0.0), axis=1)
        *values, center = S.value_splits(sx, sy)
        old_values = _old_value_splits(sx, sy)
        _assert_same((*values, center), old_values)
        assert all(S.plain(s) for s in (*sx, *sy))
        _assert_same(S.distance_splits(sx, sy, center), _old_distance_splits(sx, sy, center))


def test_negative_zeros_and_non_finite_rows_take_the_merge():
    """−0.0 beside 0.0 (np.round) and inf/NaN rows: the merge, so the same bits as before."""
    rng = np.random.default_rng(5)
    n = 40_000  # above MERGE_BELOW
    sx = np.sort(np.round(rng.normal(0.2, 1, (1, n)), 1), axis=1)
    sy = np.sort(np.round(rng.normal(0.0, 1, (1, n)), 1), axis=1)
    assert np.signbit(sx[sx == 0]).any() and not S.plain(sx[0])
    *_, center = S.value_splits(sx, sy)
    _assert_same(S.distance_splits(sx, sy, center), _old_distance_splits(sx, sy, center))
    signed = np.array([-1.0, -0.0, 0.0, 0.0, 1.0])  # the median and the splits among zeros
    for _ in range(5):
        zx, zy = (np.sort(rng.choice(signed, (1, n)), axis=1) for _ in "xy")
        *_, center = S.value_splits(zx, zy)
        _assert_same(S.distance_splits(zx, zy, center), _old_distance_splits(zx, zy, center))
    for bad in (np.inf, np.nan):
        tx = np.sort(np.append(rng.normal(size=n - 1), bad))[None]
        assert not S.plain(tx[0])
        *_, center = S.value_splits(tx, sy)
        _assert_same(S.distance_splits(tx, sy, center), _old_distance_splits(tx, sy, center))


def test_bisection_at_large_sizes_with_ties_is_the_merge():
    rng = np.random.default_rng(11)
    for draw in (lambda s: rng.normal(0, 1, s), lambda s: np.floor(rng.normal(0, 2, s)) + 0.0):
        sx, sy = np.sort(draw((2, 50_000)) + 0.4, axis=1), np.sort(draw((2, 50_000)), axis=1)
        *_, center = S.value_splits(sx, sy)
        _assert_same(S.distance_splits(sx, sy, center), _old_distance_splits(sx, sy, center))


@pytest.mark.parametrize("negative_zero", [False, True])
def test_sorted_past_with_sorted_batches_is_the_sorted_past(negative_zero):
    """add() of the sorted batches, one or several between updates: the rows of sorting the
    new outputs (in the order they were bet on) at each update, bit for bit, −0.0 included."""
    rng = np.random.default_rng(2)
    plain, fast = B.SortedPast(), B.SortedPast()
    px, py, zero_order_differs = np.empty(0), np.empty(0), 0
    for j, m in enumerate([2, 2, 4, 7, 9, 100, 13, *rng.integers(50, 3000, 30)]):
        bx, by = np.round(rng.normal(0, 1, m), 1), np.round(rng.normal(0.3, 1, m), 1)
        if not negative_zero:
            bx, by = bx + 0.0, by + 0.0
        shuffled = rng.permutation(bx)
        sx = np.sort(bx)
        zero_order_differs += not np.array_equal(np.signbit(sx), np.signbit(np.sort(shuffled)))
        px, py = np.append(px, shuffled), np.append(py, rng.permutation(by))
        fast.add(sx, np.sort(by))
        if j % 4 != 1:  # else two batches before the next update
            _assert_same(fast.update(px, py), plain.update(px, py))
    assert fast.size == plain.size == px.size
    assert (zero_order_differs > 0) == negative_zero  # the case the guard is for, met
