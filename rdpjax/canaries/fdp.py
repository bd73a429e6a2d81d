"""Mahloujifar, Melis, Chaudhuri's one-run bound for an f-DP mechanism, for any trade-off curve f.

"Auditing f-differential privacy in one run" (arXiv:2410.22235v1: the guessing game with
abstention and its numerical tail bound, ``audit_rh_with_cap`` in the paper as jax_privacy's
source names it): a mechanism whose every pair of neighbouring output laws has trade-off
``T(P, Q) ≥ f`` gives, with m canaries included with probability ½ and c' guesses (in or out)
of which c are correct, an event "at least c correct" of probability at most τ only if the
recursion below ends with ``r + h ≤ c' / m``:

    r ← τ c / m,  h ← τ (c' − c) / m
    for i = c − 1, …, 0:
        h' ← max(h, f(1 − r));   stop if h' = h
        r ← min(r + i / (c' − i) · (h' − h), 1);  h ← h'

So ``r + h > c' / m`` rejects the f-DP hypothesis at level τ. ``f(1 − r)`` is the least mass a
set of mass r under one neighbour has under the other: taking the test that rejects off the
set, ``Q(S) = β ≥ f(α) = f(1 − P(S))`` (Dong, Roth, Su, arXiv:1905.02383v3, Def. 2.1–2.3).
Both orders of every neighbouring pair satisfy ``T ≥ f`` under an f-DP claim, which is what
lets the guesses be two-sided.

The paper, and jax_privacy 2.0's ``auditing._epsilon_one_run_fdp``, run it with f the trade-off
curve of the Gaussian mechanism only. Here f is any callable: the (ε, δ) curve
``f_{ε,δ}`` (DRS eq. (6); every (ε, δ)-DP mechanism is f_{ε,δ}-DP, ibid. Prop. 2.5) gives an
ε lower bound valid for **any** (ε, δ)-DP mechanism with no ``2mδ`` term; the Gaussian curve
``G_μ`` (DRS eq. (4)) a certified μ; a claim's own curve (:func:`claim_curve`) a direct test.
The equation numbers of arXiv:2410.22235 were not checked against the paper for this module;
the recursion is the one jax_privacy implements, and ``tests/canaries`` and the calibration
benchmark check its validity by simulation.

Cost: one vectorized pass per batch of hypotheses, at most ``max c`` steps, usually far fewer
(each row stops when h stops growing). Host float64.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rdpjax.canaries._search import largest_rejected

__all__ = ["eps_delta_curve", "gaussian_curve", "mu_lower", "rejects", "epsilon_lower"]

EPSILON_MAX = 32.0
MU_MAX = 16.0


def eps_delta_curve(a: np.ndarray, epsilon: np.ndarray, delta: float) -> np.ndarray:
    """``f_{ε,δ}(a) = max(0, 1 − δ − e^ε a, e^{−ε}(1 − δ − a))`` (DRS eq. (6)), vectorized in ε.

    :func:`rdpjax.claims.tradeoff` evaluates one claim; the searches here need a batch of ε at
    once (``tests/canaries`` checks the two agree).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        steep = np.where(a > 0.0, 1.0 - delta - np.exp(epsilon) * a, 1.0 - delta)
    flat = np.exp(-epsilon) * (1.0 - delta - a)
    return np.maximum(0.0, np.maximum(steep, flat))  # DRS eq. (6)


def gaussian_curve(a: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``G_μ(a) = Φ(Φ⁻¹(1 − a) − μ)`` (DRS eq. (4)), vectorized in μ."""
    from scipy import special

    with np.errstate(divide="ignore"):
        return special.ndtr(special.ndtri(1.0 - a) - mu)  # DRS eq. (4)


def rejects(
    curve: Callable[[np.ndarray], np.ndarray],
    m: int,
    n_guess: np.ndarray,
    n_correct: np.ndarray,
    level: float,
) -> np.ndarray:
    """Whether "f-DP" is rejected at ``level``: the recursion above, one row per hypothesis.

    Args:
        curve: maps an array of type I errors (the batch's shape) to f at each, row by row
            (so a batch may hold a different f per entry, e.g. ``f_{ε,δ}`` at a grid of ε).
        m: the number of canaries.
        n_guess: guesses c' (array, the batch's shape).
        n_correct: correct guesses c, same shape.
        level: τ, the level of each test (a float, or an array broadcast with the batch).

    Returns:
        bool array of the batch's shape: True where ``r + h > c' / m``.
    """
    c_all = np.asarray(n_guess, np.float64)
    c = np.asarray(n_correct, np.float64)
    r = level * c / m  # r ← τc/m
    h = level * (c_all - c) / m  # h ← τ(c' − c)/m
    running = np.zeros(c.shape, bool)
    last_start = int(c[c > 0].min(initial=1)) - 1  # every row has started once i ≤ this
    for i in range(int(c.max(initial=0)) - 1, -1, -1):
        running |= i == c - 1  # a row starts at i = c − 1
        if not running.any():
            continue
        h_new = np.maximum(h, curve(np.clip(1.0 - r, 0.0, 1.0)))  # h' ← max(h, f(1 − r))
        moved = running & (h_new > h)
        step = i / np.maximum(c_all - i, 1.0) * (h_new - h)
        r = np.where(moved, np.minimum(r + step, 1.0), r)  # r ← min(r + i/(c'−i)(h'−h), 1)
        h = np.where(moved, h_new, h)
        running = moved  # a row whose h did not move never moves again
        if i <= last_start and not running.any():
            break
    return r + h > c_all / m


def _per_pair(level: Any, size: int) -> np.ndarray:
    """``level`` (a float, or one level per guess pair) as a (G, 1) column."""
    return np.broadcast_to(np.asarray(level, np.float64), (size,))[:, None]


def epsilon_lower(
    m: int, n_guess: np.ndarray, n_correct: np.ndarray, delta: float, level: Any
) -> np.ndarray:
    """For each guess pair, the largest ε with (ε, δ)-DP (the curve f_{ε,δ}) rejected at ``level``.

    Args:
        m: the number of canaries.
        n_guess: (G,) guesses of each pair.
        n_correct: (G,) correct guesses of each pair.
        delta: δ of the hypotheses.
        level: each pair's test level: one float, or (G,) levels (a weighted Bonferroni split).

    Returns:
        (G,) float64: a rejected ε, or 0 (see :mod:`._search` for why that is a lower bound).
    """
    r, v = np.asarray(n_guess)[:, None], np.asarray(n_correct)[:, None]
    tau = _per_pair(level, r.shape[0])

    def test(eps: np.ndarray) -> np.ndarray:
        return rejects(lambda a: eps_delta_curve(a, eps, delta), m, r + 0 * eps, v + 0 * eps, tau)

    return largest_rejected(test, r.shape[0], EPSILON_MAX)


def mu_lower(m: int, n_guess: np.ndarray, n_correct: np.ndarray, level: Any) -> np.ndarray:
    """For each guess pair, the largest μ with μ-GDP (the curve G_μ) rejected at ``level``.

    ``level``: one float, or (G,) levels, as in :func:`epsilon_lower`.
    """
    r, v = np.asarray(n_guess)[:, None], np.asarray(n_correct)[:, None]
    tau = _per_pair(level, r.shape[0])

    def test(mu: np.ndarray) -> np.ndarray:
        return rejects(lambda a: gaussian_curve(a, mu), m, r + 0 * mu, v + 0 * mu, tau)

    return largest_rejected(test, r.shape[0], MU_MAX)
