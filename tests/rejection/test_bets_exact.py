"""The bets' order statistics found without merging are those of the merges, bit for bit, and
each candidate set's counts are those of the set the bets place (counted directly).

Issue 52: ``plan_bets`` finds the distance family's split points by bisection over four
monotone runs (``_runs_order_statistics``) rather than by merging the sorted distances, finds
the median with the value family's split points, and ``SortedPast`` merges in the sorted
batches the test has already made. The references here are the merges they replace.
"""

import dataclasses

import numpy as np
import pytest

from rdpjax.claims import approx_dp, gdp, pure_dp
from rdpjax.rejection import bets as B
from rdpjax.rejection import splits as S
from rdpjax.rejection import wealth as W


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


@pytest.mark.parametrize("negative_zero", [False, True])
def test_sorted_past_of_float32_batches_is_the_float64_merge(negative_zero):
    """float32 outputs are merged as float32 (issue 52): the rows are the float64 rows of the
    merges before, bit for bit (each update's new outputs sorted, converted to float64 and
    merged stably after the past), −0.0 beside 0.0 included."""
    rng = np.random.default_rng(4)
    past = B.SortedPast()
    px, py = np.empty(0, np.float32), np.empty(0, np.float32)
    ref_x, ref_y = np.empty(0), np.empty(0)
    for j, m in enumerate([2, 2, 4, 9, 100, *rng.integers(50, 3000, 20)]):
        bx = np.round(rng.normal(0, 1, m), 1).astype(np.float32)
        by = np.round(rng.normal(0.3, 1, m), 1).astype(np.float32)
        if not negative_zero:
            bx, by = bx + np.float32(0.0), by + np.float32(0.0)
        px, py = np.append(px, rng.permutation(bx)), np.append(py, rng.permutation(by))
        past.add(np.sort(bx), np.sort(by))
        if j % 3 == 1:
            continue  # two batches before the next update
        new = slice(ref_x.size, px.size)
        ref_x = np.sort(np.concatenate([ref_x, np.sort(px[new]).astype(np.float64)]), kind="stable")
        ref_y = np.sort(np.concatenate([ref_y, np.sort(py[new]).astype(np.float64)]), kind="stable")
        _assert_same(past.update(px, py), (ref_x[None], ref_y[None]))
    assert past.size == px.size and past.kept[0].dtype == np.float32
    assert (np.signbit(ref_x) & (ref_x == 0)).any() == negative_zero


def _pairwise_log_multipliers(bets, bx, by):
    """Before issue 52's second pass: each pair's ``log(1 + λZ)`` from its own Z."""
    if bets.codes is not None:
        idx = np.clip(np.searchsorted(bets.codes, bx), 0, bets.codes.size - 1)
        sx = np.where(bets.codes[idx] == bx, np.take_along_axis(bets.ranks, idx, axis=1),
                      bets.codes.size).astype(np.float64)  # fmt: skip
        idx = np.clip(np.searchsorted(bets.codes, by), 0, bets.codes.size - 1)
        sy = np.where(bets.codes[idx] == by, np.take_along_axis(bets.ranks, idx, axis=1),
                      bets.codes.size).astype(np.float64)  # fmt: skip
    else:
        two_sided = (bets.family == 1)[:, None]
        sx = np.where(two_sided, np.abs(bx - bets.center[:, None]), bx)
        sy = np.where(two_sided, np.abs(by - bets.center[:, None]), by)
    t, below = bets.threshold[:, None], bets.below[:, None]
    in_x, in_y = np.where(below, sx < t, sx >= t), np.where(below, sy < t, sy >= t)
    swap = bets.swap[:, None]
    a, b = np.where(swap, in_y, in_x), np.where(swap, in_x, in_y)
    z = a - np.exp(bets.epsilon)[:, None] * b - bets.delta[:, None]
    return np.log1p(bets.lam[:, None] * z)


@pytest.mark.parametrize("rows", [1, 4])
@pytest.mark.parametrize("discrete", [False, True])
def test_multipliers_looked_up_are_those_of_each_pair(rows, discrete):
    """log_multipliers and Multipliers look each pair's multiplier up among Z's four values:
    the numbers of computing it pair by pair, bit for bit, on planned and on random bets."""
    rng = np.random.default_rng(8 + rows + 10 * discrete)
    claims = (approx_dp(0.7, 1e-3), gdp(1.3), pure_dp(0.4))
    for trial in range(30):
        eps, delta = B.epsilon_grid(claims[trial % 3])
        n, b = int(rng.integers(5, 3000)), int(rng.integers(1, 2000))
        if discrete:
            px, py = rng.geometric(0.3, (rows, n)), rng.geometric(0.4, (rows, n))
            bx, by = rng.geometric(0.3, (rows, b)), rng.geometric(0.4, (rows, b))
        else:
            px, py = rng.normal(0.5, 1, (rows, n)), rng.normal(0, 1, (rows, n))
            bx, by = (
                np.round(rng.normal(0.5, 1, (rows, b)), 2),
                np.round(rng.normal(0, 1, (rows, b)), 2),
            )
        strategies = B.plan_bets(px, py, eps, delta, discrete, (0.75, 0.375))
        if trial % 2:  # random sets, directions and bets, each row its own
            pick = rng.integers(0, eps.size, rows)
            cap = B.CAP / (np.exp(eps[pick]) + delta[pick])
            random = dict(epsilon=eps[pick], delta=delta[pick], lam=rng.uniform(0, 1, rows) * cap)
            random |= dict(below=rng.random(rows) < 0.5, swap=rng.random(rows) < 0.5)
            if not discrete:
                random |= dict(family=rng.integers(0, 2, rows))
            strategies = [dataclasses.replace(s, **random) for s in strategies]
            if trial % 4 == 3:  # the second strategy's sets differ from the first's
                strategies[1] = dataclasses.replace(strategies[1], below=~random["below"])
        reference = [_pairwise_log_multipliers(s, bx, by) for s in strategies]
        for got, want in zip(W.Multipliers(strategies)(bx, by), reference, strict=True):
            _assert_same((got,), (want,))
        _assert_same([W.log_multipliers(s, bx, by) for s in strategies], reference)


def test_the_first_crossing_is_that_of_the_hedged_wealth_at_every_pair():
    """_first_crossing computes the hedged wealth only near the level: the pair and the value
    of computing it at every pair, including a level met exactly."""
    rng = np.random.default_rng(6)
    for trial in range(200):
        j, b = int(rng.integers(1, 4)), int(rng.integers(1, 500))
        paths = np.cumsum(rng.normal(0.02, 0.3, (j, 1, b)), axis=2)
        hedged = np.logaddexp.reduce(paths, axis=0)[0] - np.log(j)
        level = [
            3.0,
            float(rng.choice(hedged)),
            float(hedged.max()),
            np.nextafter(hedged.max(), 9),
        ][trial % 4]
        crossed = np.flatnonzero(hedged >= level)
        want = (
            (int(crossed[0]), float(hedged[crossed[0]]))
            if crossed.size
            else (None, float(hedged[-1]))
        )
        assert W.first_crossing(paths, level) == want
