"""Steinke's one-run test made simultaneous over the guess grid: one level for every pair.

The guess grid's pairs are nested: "in" on the 10, 20, 50, … top scores, or "in" on the top a
and "out" on the bottom a (or a + 1). :mod:`.steinke` tests each pair at its Bonferroni share
α/G; the counts of nested guess sets are strongly dependent, so the chance that *some* pair
rejects is well below the sum of the shares. This module computes that chance exactly and spends
all of the level on it.

**Why it is valid** (written here; it extends Steinke, Nasr, Jagielski, arXiv:2305.08846v1,
Thm 3.1, from one guess count to the whole path of counts). Inclusion bits S_j ~ Bernoulli(½)
independently, output Y = M(S), and every canary j with its guess g_j ∈ {in, out} placed on a
*track* by its rank in Y (and by a key independent of the bits, for ties): the "in" guesses from
the top score down, the "out" guesses from the bottom score up.

1. *One canary.* Fix j and the other bits s_{−j}; let p_1, p_0 be the output densities with j
   in and out (neighbouring databases). Then P(S_j = g | Y = y, s_{−j}) = p_g / (p_1 + p_0),
   which is at most q = e^ε / (1 + e^ε) plus e_j(y) = (p_g − e^ε p_{1−g})₊ / (p_1 + p_0)
   (the first term is q where p_g ≤ e^ε p_{1−g}; elsewhere ``(u + a)/(v + a) ≤ u/v + a/(v + a)``).
   Averaged over Y given s_{−j} (density (p_1 + p_0)/2), e_j has mean at most
   ½ ∫ (p_1 − e^ε p_0)₊ + ½ ∫ (p_0 − e^ε p_1)₊ ≤ δ for an (ε, δ)-DP mechanism, whatever
   direction g the output picks; e_j = 0 when δ = 0 (Thm 3.1's bound).
2. *The path.* Visit the guessed canaries in an order fixed by Y. Given Y and the bits already
   visited, canary t is guessed right with probability h_t ≤ q + ê_t, ê_t the conditional mean
   of e_j (step 1 and the tower rule). Draw the bits in that order from uniforms U_t (the same
   joint law): C_t = 1{U_t ≤ h_t} ≤ B_t + D_t with B_t = 1{U_t ≤ q}, i.i.d. Bernoulli(q)
   independent of Y, and D_t = 1{q < U_t ≤ h_t}. So every guess set's count is at most its count
   under B plus N = Σ D_t, with E N ≤ Σ_j E e_j ≤ mδ.
3. *The test.* Rejecting when any pair's count reaches its threshold is an increasing event in
   the counts, so its probability is at most P_q(some pair's B-count reaches its threshold) +
   P(N ≥ 1) ≤ (that probability) + mδ. Under B the counts along a track are a random walk with
   Bernoulli(q) steps, and the grid's sets are prefixes of two tracks: the one-sided pairs
   (k, 0) of the "in" track, and the two-sided pairs (⌊t/2⌋, ⌈t/2⌉) of the track that
   alternates out, in, out, in, … (Bonferroni over the two tracks). :func:`crossing` computes
   each track's probability exactly by dynamic programming over the walk's law.

The statistic at a given ε is the smallest one-pair p-value ``P(Binomial(r, q) ≥ v)`` over the
grid, its p-value the exact probability (step 3) that the walk under B gives one as small; the
test at ε rejects when that is at most ``level − mδ``. These tests need not be monotone in ε,
so the reported bound is the largest point of a fixed grid of ε (:data:`EPSILON_STEP`, and a
claim's own ε) below which every point, itself included, is rejected: if the truth ε* is below
it, the first grid point at or above ε* (fixed by ε* alone) was rejected, an event of probability
at most ``level`` under the truth, since an ε*-DP mechanism is (ε, δ)-DP at every grid ε ≥ ε*.

The δ term is additive, so the test is used only when mδ is small beside the level
(:func:`usable`); Thm 5.2 and the f-DP bound pay less for δ at large m.

Cost: for each grid ε, a convolution per checkpoint of each track (FFT, batched over ε).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "EPSILON_STEP",
    "TRACK_RATIO",
    "Tracks",
    "crossing",
    "epsilon_lower",
    "grid",
    "tracks",
    "usable",
]

TRACK_RATIO = 1.1
"""The ratio between successive guess counts on each track of the joint test's own grid."""

EPSILON_STEP = 0.005
"""The spacing of the fixed grid of ε tested (the bound's resolution)."""

EPSILON_MAX = 32.0
_BATCH = 64
_SLACK = 1e-12
"""Taken off the level: the FFT convolutions' rounding is far below it."""


class Tracks(NamedTuple):
    """The grid's pairs as prefixes of the two tracks.

    Attributes:
        one: indices into the grid of the one-sided pairs (k, 0), by k.
        one_sizes: their k.
        two: indices of the two-sided pairs (⌊t/2⌋, ⌈t/2⌉), by t.
        two_sizes: their t.
    """

    one: np.ndarray
    one_sizes: np.ndarray
    two: np.ndarray
    two_sizes: np.ndarray


def grid(m: int, alpha: float) -> np.ndarray:
    """The joint test's own guess pairs on m canaries: an int array (G, 2) of (k_in, k_out).

    Totals on a geometric sequence of ratio :data:`TRACK_RATIO` from ``⌈log₂(1/α)⌉`` (fewer
    guesses, all right, have probability 2^{−r} > α under a mechanism that ignores its input:
    no level-α test could reject with them), each one-sided (k, 0) up to ⌊m/2⌋ and two-sided
    (⌊t/2⌋, ⌈t/2⌉) up to m, both ends included. It depends on m and α only. Nested pairs cost
    the joint test little, so the grid is finer than :func:`rdpjax.canaries.guesses.guess_grid`
    (which the pair-by-pair tests pay for pair by pair): on the calibration panel a ratio of
    1.1 beat the pair-by-pair grid on every law (docs/canaries.md, "One level for the whole
    grid").
    """
    start = max(1, math.ceil(math.log2(1.0 / alpha)))

    def totals(top: int) -> np.ndarray:
        if top < start:
            return np.array([top], np.int64) if top >= 1 else np.zeros(0, np.int64)
        steps = math.floor(math.log(top / start) / math.log(TRACK_RATIO)) + 1
        seq = np.floor(start * TRACK_RATIO ** np.arange(steps) + 1e-9).astype(np.int64)
        return np.unique(np.append(seq[seq <= top], top))

    one = totals(m // 2)
    two = totals(m)
    pairs = np.concatenate([np.stack([one, 0 * one], 1), np.stack([two // 2, two - two // 2], 1)])
    return np.unique(pairs, axis=0)


def tracks(grid: np.ndarray, m: int) -> Tracks | None:
    """The two tracks of ``grid`` (a (G, 2) array of (k_in, k_out)), or None where it has none.

    None when some pair is neither (k, 0) nor (⌊t/2⌋, ⌈t/2⌉), or when the "in" and "out"
    guesses could fall on one canary (largest k_in plus largest k_out above m): then some canary
    would be guessed both ways and step 2 of the module docstring fails.
    """
    grid = np.asarray(grid, np.int64)
    k_in, k_out = grid[:, 0], grid[:, 1]
    one = k_out == 0
    two = (k_out - k_in == 0) | (k_out - k_in == 1)
    two &= ~one
    if not np.all(one | two) or k_in.max() + k_out.max() > m:
        return None
    one_idx = np.flatnonzero(one)[np.argsort(k_in[one], kind="stable")]
    two_idx = np.flatnonzero(two)[np.argsort(grid[two].sum(axis=1), kind="stable")]
    return Tracks(one_idx, k_in[one_idx], two_idx, grid[two_idx].sum(axis=1))


def usable(m: int, delta: float, level: float) -> bool:
    """Whether the joint test is worth its δ term: mδ at most half of ``level``.

    Chosen on the calibration panel (docs/canaries.md, "One level for the whole grid"): at
    α = 0.05 and δ = 10⁻⁵ its first version (on the pair-by-pair grid) beat the pair-by-pair
    tests at m = 2,000 (mδ = 0.4 of its level), tied at 3,000 and lost at 4,000; on its own
    grid it also gains at 3,000 and is mixed at 4,000 (the rule was left as it is).
    """
    return m * delta <= 0.5 * level


def _first_rejected(n: int, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The least c with ``P(Binomial(n, q) ≥ c) ≤ s``, per (q, s): (E,) ints in [0, n + 1].

    Started from scipy's inverse survival function and moved a step at a time until the
    tail, evaluated as the p-values are (``binom.sf(c − 1)``), is at most s at c and above s
    at c − 1: the rejection region is exactly the one the p-values define, at any rounding.
    """
    from scipy import stats

    tail = lambda c: np.where(c <= 0, 1.0, stats.binom.sf(c - 1, n, q))  # noqa: E731
    c = np.clip(np.nan_to_num(stats.binom.isf(s, n, q), nan=n) + 1, 0, n + 1).astype(np.int64)
    while True:
        down = (c > 0) & (tail(c - 1) <= s)
        up = (c <= n) & (tail(c) > s) & ~down
        if not (down.any() or up.any()):
            return c
        c = c - down + up


def crossing(sizes: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """P(some checkpoint's one-pair p-value ≤ s) for the i.i.d. Bernoulli(q) walk, per q.

    Args:
        sizes: increasing checkpoint sizes (the prefixes' lengths).
        q: (E,) step probabilities.
        s: (E,) p-value thresholds.

    Returns:
        (E,) float64: the probability that at some checkpoint n the walk's count c has
        ``P(Binomial(n, q) ≥ c) ≤ s`` (step 3 of the module docstring), by dynamic programming
        over the law of the walk kept below every threshold so far.
    """
    from scipy import signal, stats

    q = np.asarray(q, np.float64)
    dist = np.ones((q.size, 1))  # the walk's law at 0 steps, among paths not yet rejected
    hit, prev = np.zeros(q.size), 0
    for n in np.asarray(sizes, np.int64):
        step = stats.binom.pmf(np.arange(n - prev + 1)[None, :], n - prev, q[:, None])
        dist = np.clip(signal.fftconvolve(dist, step, axes=1), 0.0, None)
        first = _first_rejected(int(n), q, s)  # the smallest count rejected
        tail = np.arange(dist.shape[1])[None, :] >= first[:, None]
        hit += np.where(tail, dist, 0.0).sum(axis=1)
        dist = np.where(tail, 0.0, dist)
        prev = int(n)
    return hit


def _smallest_p(track: Tracks, n_correct: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, Any]:
    """Each q's smallest one-pair p-value over the grid, and the pair attaining it."""
    from scipy import stats

    sizes = np.concatenate([track.one_sizes, track.two_sizes])
    idx = np.concatenate([track.one, track.two])
    v = np.asarray(n_correct, np.float64)[idx]
    p = stats.binom.sf(v[None, :] - 1.0, sizes[None, :], q[:, None])  # (E, pairs)
    return p.min(axis=1), idx[np.argmin(p, axis=1)]


def _rejected(track: Tracks, n_correct: np.ndarray, eps: np.ndarray, level: float):
    q = 1.0 / (1.0 + np.exp(-eps))  # e^ε / (1 + e^ε)
    s, best = _smallest_p(track, n_correct, q)
    pairs = track.one.size + track.two.size
    # P(p-value ≤ s) ≤ s for each pair, so Bonferroni's pairs·s bounds the exact probability:
    # where it is within the level, no dynamic programming is needed.
    p = pairs * s
    todo = p > level - _SLACK
    if todo.any():
        p[todo] = 0.0
        for sizes in (track.one_sizes, track.two_sizes):
            if sizes.size:
                p[todo] += crossing(sizes, q[todo], s[todo])  # Bonferroni over the two tracks
    return p <= level - _SLACK, best


def epsilon_lower(
    m: int,
    track: Tracks,
    n_correct: np.ndarray,
    delta: float,
    level: float,
    extra: float | None = None,
) -> tuple[float, int]:
    """The largest fixed-grid ε below which every grid point is rejected, and its pair.

    Args:
        m: the number of canaries.
        track: the grid's :func:`tracks`.
        n_correct: (G,) correct guesses of the grid's pairs.
        delta: δ of the (ε, δ) hypotheses.
        level: the error probability spent on this test (mδ of it pays for δ).
        extra: one more ε added to the grid (a claim's, fixed before the data), or None.

    Returns:
        ``(epsilon, pair)``: the bound (0 if ε = 0 is not rejected) and the grid index of the
        pair with the smallest p-value there (-1 for a bound of 0).
    """
    budget = level - m * delta  # step 3: mδ for the δ term
    if budget <= 0.0:
        return 0.0, -1
    grid = np.round(np.arange(0.0, EPSILON_MAX + EPSILON_STEP / 2, EPSILON_STEP), 10)
    if extra is not None and 0.0 <= extra <= EPSILON_MAX:
        grid = np.unique(np.append(grid, float(extra)))
    bound, pair = 0.0, -1
    for start in range(0, grid.size, _BATCH):
        eps = grid[start : start + _BATCH]
        rej, best = _rejected(track, n_correct, eps, budget)
        if not rej.all():
            k = int(np.argmin(rej))  # the first grid point kept
            if k == 0:
                return bound, pair
            return float(eps[k - 1]), int(best[k - 1])
        bound, pair = float(eps[-1]), int(best[-1])
    return bound, pair
