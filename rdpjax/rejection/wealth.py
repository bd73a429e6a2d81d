"""The wealth's steps: each pair's log multiplier, and where the hedged wealth reaches the level.

The steps of :mod:`rdpjax.rejection.betting`'s wealth under a batch's bets.

A bet (:class:`~rdpjax.rejection.bets.Bets`) pays ``Z = 1_S(A) − e^ε 1_S(B) − δ`` on a pair,
which takes four values a row: each pair's ``log(1 + λZ)`` is looked up among the four
(:func:`log_multipliers`, :class:`Multipliers` for the batches of one plan), the numbers of
computing it pair by pair. The hedged log wealth, the log of the strategies' mean wealth
(:func:`hedged`), is computed only near the level (:func:`first_crossing`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from rdpjax.rejection.bets import Bets

__all__ = ["Multipliers", "first_crossing", "hedged", "log_multipliers"]

NEAR = 1e-6
"""Relative margin below the level within which the hedged log wealth is computed (a pair)."""


def _scores(bets: Bets, v: np.ndarray) -> np.ndarray:
    if bets.codes is not None and bets.ranks is not None:
        idx = np.clip(np.searchsorted(bets.codes, v), 0, bets.codes.size - 1)
        seen = bets.codes[idx] == v
        ranks = np.take_along_axis(bets.ranks, idx, axis=1)
        return np.where(seen, ranks, bets.codes.size).astype(np.float64)
    if bets.family.size == 1:  # one row: only its own family's score (the same values)
        return np.abs(v - bets.center[:, None]) if bets.family[0] == 1 else v
    two_sided = (bets.family == 1)[:, None]
    return np.where(two_sided, np.abs(v - bets.center[:, None]), v)


def _members(bets: Bets, v: np.ndarray) -> np.ndarray:
    """Whether each output of ``v`` (shape ``(R, b)``) is in its row's set."""
    s, t = _scores(bets, v), bets.threshold[:, None]
    if bets.below.size == 1:  # one row: only the comparison its set makes
        return s < t if bets.below[0] else s >= t
    return np.where(bets.below[:, None], s < t, s >= t)


def _outcomes(bets: Bets, bx: np.ndarray, by: np.ndarray) -> np.ndarray:
    """Each pair's outcome ``1_S(A) + 2·1_S(B)`` (0 to 3, ``uint8``; A = X unless ``swap``)."""
    in_x, in_y = _members(bets, bx), _members(bets, by)
    if bets.swap.size == 1:
        a, b = (in_y, in_x) if bets.swap[0] else (in_x, in_y)
    else:
        swap = bets.swap[:, None]
        a, b = np.where(swap, in_y, in_x), np.where(swap, in_x, in_y)
    out = b.view(np.uint8) << 1
    out |= a.view(np.uint8)
    return out


def _multiplier_table(bets: Bets) -> np.ndarray:
    """``log(1 + λ Z)`` for each row and outcome (:func:`_outcomes`), shape ``(R, 4)``.

    ``Z = 1_S(A) − e^ε 1_S(B) − δ`` takes four values: each computed with the same
    operations, in the same order, as pair by pair, so the table's entries are those values.
    """
    a, b = np.array([[False, True, False, True]]), np.array([[False, False, True, True]])
    with np.errstate(over="ignore", invalid="ignore"):  # e^ε = inf from ε ≈ 710
        e = np.exp(bets.epsilon)[:, None]
        z = a - e * b - bets.delta[:, None]
        table = np.log1p(bets.lam[:, None] * z)
    stake_none = (bets.lam[:, None] == 0) & np.isnan(table)  # e^ε = inf: 0 · inf
    return np.where(stake_none, 0.0, table)  # no stake: a factor of 1, not NaN


def _same_sets(u: Bets, v: Bets) -> bool:
    """Whether two bets put every output in or out of their sets alike (same outcomes)."""
    fields = ("family", "center", "threshold", "below", "swap")
    return (
        u.codes is None
        and v.codes is None
        and all(np.array_equal(getattr(u, f), getattr(v, f)) for f in fields)
    )


def _looked_up(table: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
    if table.shape[0] == 1:
        return table[0].take(outcomes)
    return np.take_along_axis(table, outcomes.astype(np.intp), axis=1)


def log_multipliers(bets: Bets, bx: np.ndarray, by: np.ndarray) -> np.ndarray:
    """``log(1 + λ Z_i)`` for each pair of a batch ``bx, by`` (shape ``(R, b)``).

    Z takes four values a row (:func:`_multiplier_table`), so each pair's multiplier is looked
    up by its outcome (:func:`_outcomes`) rather than computed pair by pair: the same numbers.
    """
    return _looked_up(_multiplier_table(bets), _outcomes(bets, bx, by))


class Multipliers:
    """:func:`log_multipliers` of several strategies' bets, batch after batch (one plan).

    The tables of multipliers are made once; a strategy whose sets are those of the one
    before it (often all of them) shares its pairs' outcomes rather than finding them again.

    Args:
        strategies: one :class:`Bets` per strategy.
    """

    def __init__(self, strategies: list[Bets]) -> None:
        self.strategies = strategies
        self.tables = [_multiplier_table(bets) for bets in strategies]
        self.fresh = [
            j == 0 or not _same_sets(b, strategies[j - 1]) for j, b in enumerate(strategies)
        ]

    def __call__(self, bx: np.ndarray, by: np.ndarray) -> Iterator[np.ndarray]:
        """Each strategy's ``log(1 + λ Z_i)`` for the pairs ``bx, by`` (``(R, b)``), in turn."""
        outcomes = None
        for bets, table, fresh in zip(self.strategies, self.tables, self.fresh, strict=True):
            if fresh or outcomes is None:
                outcomes = _outcomes(bets, bx, by)
            yield _looked_up(table, outcomes)


def hedged(paths: np.ndarray) -> np.ndarray:
    """The log of the mean wealth over strategies (axis 0)."""
    return np.logaddexp.reduce(paths, axis=0) - np.log(paths.shape[0])


def first_crossing(paths: np.ndarray, level: float) -> tuple[int | None, float]:
    """The first pair of a one-row batch where the hedged log wealth is ≥ ``level``, and it there.

    ``paths``: ``(J, 1, b)``. Returns ``(i, hedged)``, with ``i = None`` and the hedged log
    wealth at the batch's end when it never is. The hedged log wealth (:func:`hedged`) is
    computed only where the richest strategy's is within :data:`NEAR` of ``level``: the mean
    wealth is at most the largest, so elsewhere it is below ``level`` (the rounding of
    :func:`hedged` is far smaller than :data:`NEAR`); each value computed is the one
    :func:`hedged` gives there (an elementwise function).
    """
    j, floor = paths.shape[0], level - NEAR * (1.0 + abs(level))
    near = np.empty(0, np.intp)
    if not paths.max() < floor:  # (NaN anywhere: look at every pair, as hedged would)
        richest = paths[0, 0] if j == 1 else np.maximum.reduce(paths[:, 0], axis=0)
        near = np.flatnonzero(richest >= floor)
    if near.size:
        crossed = np.flatnonzero(hedged(paths[:, 0, near]) >= level)
        if crossed.size:
            i = int(near[crossed[0]])
            return i, float(hedged(paths[:, 0, i]))
    return None, float(hedged(paths[:, 0, -1]))
