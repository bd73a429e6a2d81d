"""Steinke, Nasr, Jagielski's one-run tail bound on the number of correct guesses.

With m canaries included independently with probability ½ and ``r`` guesses (a number fixed in
advance, each "in" or "out", abstaining on the rest), the number W of correct guesses of an
(ε, δ)-DP mechanism satisfies, for every v ("Privacy auditing with one (1) training run",
arXiv:2305.08846v1):

* δ = 0, Thm 3.1:  ``P(W ≥ v) ≤ F(v)``, ``F(v) = P(Binomial(r, q) ≥ v)``, ``q = e^ε / (1 + e^ε)``;
* δ > 0, Thm 5.2:  ``P(W ≥ v) ≤ F(v) + 2mδ · max_{1 ≤ i ≤ m} (F(v − i) − F(v)) / i``.

In the second, ``F(v − i) = 1`` for ``i ≥ v``, so the terms past ``i = v`` are
``(1 − F(v)) / i`` and decrease: the maximum is over ``1 ≤ i ≤ v``. The m in ``2mδ`` is every
canary, guessed or not: more canaries can lower this bound at fixed δ, which the f-DP bound of
:mod:`.fdp` (with the (ε, δ) trade-off curve) avoids.

The same formula as jax_privacy 2.0's ``auditing._one_run_p_value``; written here from the paper.
Host float64; ``F`` through ``scipy.special.betainc`` (the binomial upper tail). Cost O(G · v) per
ε for G guess pairs with at most v correct guesses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rdpjax.canaries._search import largest_rejected

__all__ = ["epsilon_lower", "p_value"]

_CELLS = 1 << 22

EPSILON_MAX = 32.0
"""The largest ε searched: r ≤ m guesses all correct give at most ε ≈ log(r / log(1/level))."""


def _upper_tail(v: np.ndarray, r: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``P(Binomial(r, q) ≥ v)``, 1 for v ≤ 0 (elementwise, broadcast)."""
    from scipy import special

    v, r, q = np.broadcast_arrays(v, r, q)
    # P(X ≥ v) = I_q(v, r − v + 1), the regularized incomplete beta function, for 1 ≤ v ≤ r.
    with np.errstate(invalid="ignore"):
        tail = special.betainc(np.maximum(v, 1.0), np.maximum(r - v + 1.0, 1.0), q)
    return np.where(v <= 0, 1.0, np.where(v > r, 0.0, tail))


def _gap_max(v: np.ndarray, r: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``max_{1 ≤ i ≤ v} (F(v − i) − F(v)) / i`` of Thm 5.2, for 1-D arrays of rows.

    ``F(v − i) − F(v) = P(v − i ≤ X ≤ v − 1)``, X ~ Binomial(r, q): a cumulative sum of the pmf
    from ``v − 1`` down, each pmf value the previous times ``(j + 1)(1 − q) / ((r − j) q)``
    (in log space). O(v) per row, no incomplete beta function per (row, i).
    """
    from scipy import stats

    width = max(int(v.max(initial=1)), 1)
    i = np.arange(1, width + 1, dtype=np.float64)[None, :]
    v, r, eps = v[:, None], r[:, None], eps[:, None]
    log_q = -np.log1p(np.exp(-eps))  # log e^ε/(1 + e^ε)
    log_1mq = -eps + log_q  # log 1/(1 + e^ε)
    j = v - i  # the pmf's argument at step i: v − 1, v − 2, …
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.log(j + 1.0) + log_1mq - np.log(r - j) - log_q  # log pmf(j) / pmf(j + 1)
    step = np.where((i > 1) & (j >= 0), step, 0.0)
    log_pmf = stats.binom.logpmf(np.maximum(v - 1, 0), r, np.exp(log_q)) + np.cumsum(step, 1)
    pmf = np.where((j >= 0) & (v >= 1), np.exp(log_pmf), 0.0)
    return (np.cumsum(pmf, axis=1) / i).max(axis=1)


def _bound(m: int, r: np.ndarray, v: np.ndarray, eps: np.ndarray, delta: float, level: Any):
    """The Thm 3.1/5.2 bound on flat arrays, exact where the δ = 0 bound is ≤ ``level``.

    ``level``: a float or a flat array like ``r`` (each entry's own level).

    Elsewhere it is only known to exceed ``level`` (Thm 5.2 adds a non-negative term).
    """
    q = 1.0 / (1.0 + np.exp(-eps))  # e^ε / (1 + e^ε), Thm 3.1
    out = _upper_tail(v, r, q)  # F(v), Thm 3.1
    todo = np.flatnonzero(out <= level) if delta > 0.0 else np.zeros(0, np.int64)
    if todo.size:
        # Rows in chunks of about 2²² (row, i) cells: the memory stays bounded at any m.
        chunk = max(1, _CELLS // max(int(v[todo].max()), 1))
        for start in range(0, todo.size, chunk):
            rows = todo[start : start + chunk]
            gap = _gap_max(v[rows], r[rows], eps[rows])
            out[rows] = out[rows] + 2.0 * m * delta * gap  # Thm 5.2: F(v) + 2mδ max_i (…)/i
    return np.minimum(out, 1.0)


def p_value(m: int, n_guess: Any, n_correct: Any, epsilon: Any, delta: float) -> np.ndarray:
    """The bound on ``P(W ≥ n_correct)`` of Thm 3.1 (δ = 0) or Thm 5.2 (δ > 0), capped at 1.

    Args:
        m: the number of canaries (all of them, guessed or not).
        n_guess: guesses r ≥ 1 (array; broadcast with the others).
        n_correct: correct guesses v, 0 ≤ v ≤ r.
        epsilon: ε ≥ 0 of the (ε, δ)-DP hypothesis.
        delta: δ in [0, 1].

    Returns:
        float64 array of p-values in [0, 1]: under any (ε, δ)-DP mechanism, ``P(p ≤ a) ≤ a``
        for each fixed guess pair.
    """
    r, v, eps = np.broadcast_arrays(
        np.asarray(n_guess, np.float64),
        np.asarray(n_correct, np.float64),
        np.asarray(epsilon, np.float64),
    )
    out = _bound(m, r.ravel(), v.ravel(), eps.ravel(), delta, 1.0)
    return out.reshape(r.shape)


def epsilon_lower(
    m: int, n_guess: np.ndarray, n_correct: np.ndarray, delta: float, level: Any
) -> np.ndarray:
    """For each guess pair, the largest ε whose (ε, δ)-DP hypothesis is rejected at ``level``.

    Args:
        m: the number of canaries.
        n_guess: (G,) guesses of each pair.
        n_correct: (G,) correct guesses of each pair.
        delta: δ of the hypotheses.
        level: the level of each test (the caller's Bonferroni share): a float, or (G,) levels
            (a weighted Bonferroni split).

    Returns:
        (G,) float64: a rejected ε (valid lower bound at ``level`` for each pair, see
        :mod:`._search`), or 0.
    """
    n_guess = np.asarray(n_guess, np.float64)
    n_correct = np.asarray(n_correct, np.float64)
    level = np.broadcast_to(np.asarray(level, np.float64), n_guess.shape)
    # Pairs whose count cannot reject even ε = 0 (then q = ½) give 0 without a search.
    live = p_value(m, n_guess, n_correct, 0.0, 0.0) <= level
    out = np.zeros(n_guess.shape)
    if not live.any():
        return out

    def rejects(eps: np.ndarray) -> np.ndarray:
        r, v, tau = np.broadcast_arrays(
            n_guess[live][:, None], n_correct[live][:, None], level[live][:, None], eps
        )[:3]
        bound = _bound(m, r.ravel(), v.ravel(), eps.ravel(), delta, tau.ravel())
        return bound.reshape(eps.shape) <= tau

    out[live] = largest_rejected(rejects, int(live.sum()), EPSILON_MAX)
    return out
