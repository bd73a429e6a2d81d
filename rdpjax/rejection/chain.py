"""Nested guesses tested together: the exact law of a maximum along a chain of guess sizes.

**The setting** (:mod:`.pooled`). Along one ordering, the guesses ``(t₁, t₂)`` of a *chain*
``(t₁ᵏ, t₂ᵏ)``, k = 1 … K, both ends non-decreasing in k, are nested: guess k + 1 keeps every
draw of guess k (the draws inside a cell put in one random order, :func:`chain_ends`). Given the
positions of all draws and which are dirty, the clean guesses in that order are right
independently, each with probability at most ``θ = e^ε/(1 + e^ε)`` under an (ε, δ) claim (the
marking theorem, :mod:`.pooled`). So if ``U(m)`` counts the right guesses among the first m clean
ones, it is stochastically below the partial sums of i.i.d. Bernoulli(θ), *jointly in m*. With at
most ``d`` dirty draws and ``sₖ`` right guesses among ``tₖ``, ``sₖ − d ≤ U(tₖ − d)`` for every k at
once (the clean guesses among the first ``tₖ`` are at least ``tₖ − d``, and U grows by at most one
a step).

**The test.** The statistic is ``M = maxₖ logit CP(sₖ − d, tₖ − d, a)``, the largest one-sided
Clopper–Pearson lower bound at a nominal level a (any fixed a: it only weighs the sizes), an
increasing function of the counts. Its p-value at θ is the probability that a Bernoulli(θ) walk
reaches, at some ``mₖ = tₖ − d``, the count ``cₖ`` that would give ``M`` there, computed exactly
by dynamic programming (:func:`crossing`: a distribution over the count, convolved with the
binomial increments between points, the part at or above ``cₖ`` removed; any mass cut off as
negligible is *counted as crossing*, and points far from the peak are added by the union bound
instead, so the computed p-value is never below the true one). The
p-value increases with θ, and ``logit`` of the largest θ whose p-value is at most the chain's
level is a lower confidence bound on ε (:func:`chain_epsilon`): a boundary-crossing test in the
manner of Siegmund, *Sequential Analysis* (1985), ch. 4, here exact for a finite chain. With one
point it is the Clopper–Pearson bound at the chain's level; with K points it costs much less
than a Bonferroni split K ways, since nested counts move together.

Host numpy/scipy; O(K · w²) per p-value for a count distribution w wide (``w ~ 20 √(t θ(1−θ))``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["chain_ends", "chain_epsilon", "chain_peak", "crossing"]

TAIL = 1e-14
"""Mass cut off below at each step of :func:`crossing` (added to the crossing probability)."""
SLACK = 1e-10
"""Added to every computed crossing probability, for the rounding of the binomial terms."""
BUDGET = 0.01
"""Share of a chain's level that may go to points left out of the recursion (:func:`crossing`)."""
TOL = 2e-3
"""The bound's resolution in logit: the bisection stops there, at its lower end."""


def chain_ends(
    cp: np.ndarray, cq: np.ndarray, order: np.ndarray, top: np.ndarray, bottom: np.ndarray, rng
) -> np.ndarray:
    """Right guesses of the pairs: P's among the first ``top[k]``, Q's among the last ``bottom[k]``.

    The pooled draws are put in one order for all pairs: cell by cell along ``order``, those of
    a cell in a random order (the cell's P's spread over the pieces its cuts make by one
    multivariate hypergeometric draw), independent of the labels. The first end takes from the
    front, the second from the back; so along a chain (both ends non-decreasing) guess k + 1
    contains guess k, and in one pair the ends never overlap (``top + bottom`` at most all the
    draws).
    """
    f = np.asarray(cp, np.int64)[order]
    o = np.asarray(cq, np.int64)[order]
    size = f + o
    cum = np.concatenate([[0], np.cumsum(size)])
    rcum = np.concatenate([[0], np.cumsum(size[::-1])])
    top, bottom = np.asarray(top, np.int64), np.asarray(bottom, np.int64)
    if np.any(top < 0) or np.any(bottom < 0) or np.any(top + bottom > cum[-1]):
        raise ValueError("the guesses must be within the draws")
    last = size.size - 1
    c1 = np.clip(np.searchsorted(cum, top, side="right") - 1, 0, last)  # cell of the front cut
    x1 = top - cum[c1]  # its position in that cell
    r2 = np.clip(np.searchsorted(rcum, bottom, side="right") - 1, 0, last)
    c2 = last - r2  # cell of the back cut, at position size − e2 in it
    x2 = size[c2] - (bottom - rcum[r2])
    before1 = np.where(x1 >= size[c1], f[c1], 0)  # P's before each cut in its cell
    before2 = np.where(x2 >= size[c2], f[c2], 0)
    cut1, cut2 = (x1 > 0) & (x1 < size[c1]), (x2 > 0) & (x2 < size[c2])
    cells = np.concatenate([c1[cut1], c2[cut2]])
    places = np.concatenate([x1[cut1], x2[cut2]])
    for c in np.unique(cells).tolist():  # one random order a cell, for all its cuts
        edges = np.concatenate([[0], np.unique(places[cells == c]), [size[c]]])
        spread = rng.multivariate_hypergeometric(np.diff(edges), int(f[c]))
        front = np.concatenate([[0], np.cumsum(spread)])
        for sel, cell, x, out in ((cut1, c1, x1, before1), (cut2, c2, x2, before2)):
            k = sel & (cell == c)
            out[k] = front[np.searchsorted(edges, x[k])]
    p_front = np.concatenate([[0], np.cumsum(f)])[c1] + before1
    q_back = np.concatenate([[0], np.cumsum(o[::-1])])[r2] + (size[c2] - x2) - (f[c2] - before2)
    return p_front + q_back


def _binomial(step: int, theta: float) -> tuple[int, np.ndarray]:
    """Binomial(step, θ) probabilities on ``[lo, lo + len)``, mean ± 9 sd and 12 (the rest cut)."""
    from scipy import special

    sd = np.sqrt(step * theta * (1.0 - theta))
    lo = max(0, int(np.floor(step * theta - 9.0 * sd - 12.0)))
    hi = min(step, int(np.ceil(step * theta + 9.0 * sd + 12.0)))
    k = np.arange(lo, hi + 1, dtype=np.float64)
    log = (
        special.gammaln(step + 1.0) - special.gammaln(k + 1.0) - special.gammaln(step - k + 1.0)
        + special.xlogy(k, theta) + special.xlog1py(step - k, -theta)
    )  # fmt: skip
    return lo, np.exp(log)


def crossing(m: np.ndarray, c: np.ndarray, theta: float, budget: float = 0.0) -> float:
    """``P(∃k: U(mₖ) ≥ cₖ)`` for partial sums U of i.i.d. Bernoulli(θ) (never underestimated).

    The points whose own probabilities ``P(U(mₖ) ≥ cₖ)`` are smallest, as long as they add up
    to at most ``budget`` (and any below :data:`TAIL`), are left out of the recursion and those
    probabilities added instead (the union bound), which keeps it to the points near the peak.

    Args:
        m: non-decreasing trial counts ``mₖ ≥ 0``.
        c: the counts to reach (a point with ``cₖ > mₖ`` cannot be reached).
        theta: the success probability.
        budget: the most probability added for the points left out (beyond :data:`TAIL` each).
    """
    from scipy import signal, special

    m, c = np.asarray(m, np.int64), np.asarray(c, np.int64)
    if np.any((c <= 0) & (m >= 0)):
        return 1.0
    reach = c <= m
    own = np.zeros(m.shape)
    own[reach] = special.bdtrc(c[reach] - 1, m[reach], theta)  # P(Bin(m, θ) ≥ c)
    ranked = np.argsort(own, kind="stable")
    spare = ranked[np.cumsum(own[ranked]) <= budget]
    keep = reach & (own >= TAIL)
    keep[spare] = False
    pmf, base, prev = np.ones(1), 0, 0
    cross = SLACK + float(own[reach & ~keep].sum())
    for mk, ck in zip(m[keep].tolist(), c[keep].tolist(), strict=True):
        step = mk - prev
        prev = mk
        if step > 0:
            lo, inc = _binomial(step, theta)
            cross += max(0.0, 1.0 - float(inc.sum()))  # the increment's cut tails: crossing
            big = pmf.size * inc.size > 4e5
            pmf = signal.fftconvolve(pmf, inc) if big else np.convolve(pmf, inc)
            pmf = np.clip(pmf, 0.0, None)
            base += lo
        at = ck - base
        if at <= 0:
            return 1.0
        if at < pmf.size:
            cross += float(pmf[at:].sum())
            pmf = pmf[:at]
        low = int(np.searchsorted(np.cumsum(pmf), TAIL))  # negligible mass below: crossing
        if low > 0:
            cross += float(pmf[:low].sum())
            pmf, base = pmf[low:], base + low
        if cross >= 1.0 or pmf.size == 0:
            return 1.0
    return min(1.0, cross)


def _thresholds(m: np.ndarray, value: float, nominal: float) -> np.ndarray:
    """The least count ``c`` with ``logit CP(c, m, nominal) ≥ value`` at each m (m + 1: none).

    ``CP(c, m, a) ≥ θ`` exactly when ``P_θ(Bin(m) ≥ c) ≤ a``; the answer is lowered while the
    count below still qualifies up to 10⁻⁹ (a lower threshold only raises the p-value).
    """
    from scipy import stats

    theta = 1.0 / (1.0 + np.exp(-(value - 1e-9)))
    c = np.asarray(stats.binom.isf(nominal, m, theta), np.float64) + 1
    c = np.clip(np.nan_to_num(c, nan=0.0), 1, m + 1).astype(np.int64)
    for _ in range(3):
        below = np.clip(c - 1, 1, None)
        ok = (c > 1) & (stats.binom.sf(below - 1, m, theta) <= nominal)
        c = np.where(ok, below, c)
    return c


def chain_peak(s: np.ndarray, t: np.ndarray, dirty: int, nominal: float) -> tuple[float, int]:
    """``M = maxₖ logit CP(sₖ − d, tₖ − d, nominal)`` and its k (``-inf``, -1: no right guess).

    At ``nominal`` equal to the chain's level, M is also an upper bound on
    :func:`chain_epsilon` (each point alone has a p-value no larger than the chain's).
    """
    from scipy import special

    s, t = np.asarray(s, np.int64) - dirty, np.asarray(t, np.int64) - dirty
    good = (s > 0) & (t >= s)
    if not np.any(good) or nominal <= 0:
        return -np.inf, -1
    lo = np.where(
        good, special.betaincinv(np.maximum(s, 1), np.maximum(t - s + 1, 1), nominal), 0.0
    )
    with np.errstate(divide="ignore"):
        g = np.where(good, np.log(lo) - np.log1p(-lo), -np.inf)
    k = int(np.argmax(g))
    return float(g[k]), k


def chain_epsilon(
    s: np.ndarray, t: np.ndarray, dirty: int, level: float, nominal: float | None = None
) -> tuple[float, int]:
    """The chain's lower bound on ε at ``level``, and the point where its statistic peaks.

    Args:
        s: right guesses at the chain's points (:func:`chain_ends`).
        t: guesses at them, non-decreasing.
        dirty: the most dirty draws (removed from every count).
        level: the chain's share of α.
        nominal: the Clopper–Pearson level that weighs the points in ``M`` (default ``level``).

    Returns:
        ``(ε, k)``: ``-inf`` and -1 when no point has a right guess.
    """
    nominal = level if nominal is None else nominal
    peak, k = chain_peak(s, t, dirty, nominal)
    if k < 0 or level <= 0:
        return -np.inf, -1
    s, t = np.asarray(s, np.int64) - dirty, np.asarray(t, np.int64) - dirty
    m = np.maximum(t, 0)
    if m.size == 1 and nominal == level:
        return peak, k
    c = _thresholds(m, peak, nominal)
    c[k] = min(c[k], s[k])
    return _invert(m, c, level), k


def _invert(m: np.ndarray, c: np.ndarray, level: float) -> float:
    """``logit`` of a θ with ``crossing(m, c, θ) ≤ level``, within :data:`TOL` of the largest.

    The bracket: every point at level/K gives a sum ≤ level (Bonferroni), one point at the
    whole level gives ≥ level. Inside it, regula falsi on ``log crossing − log level`` (Illinois
    variant); the lower end always has a computed crossing probability at most ``level``.
    """
    from scipy import special

    reach = c <= m
    if not np.any(reach):
        return np.inf
    mm, cc = m[reach], c[reach]
    lo = float(np.min(special.betaincinv(cc, mm - cc + 1, level / mm.size)))
    hi = float(np.min(special.betaincinv(cc, mm - cc + 1, level)))
    logit = lambda p: float(np.log(p) - np.log1p(-p))  # noqa: E731
    a, b = logit(lo), logit(hi)
    if mm.size == 1 or not np.isfinite(a) or b - a <= TOL:
        return a
    spare = BUDGET * level

    def f(x: float) -> float:
        return float(np.log(crossing(m, c, 1.0 / (1.0 + np.exp(-x)), spare)) - np.log(level))

    fa, fb = f(a), f(b)
    if fa > 0:  # the computed value above level at the Bonferroni end: keep that end
        return a
    if fb <= 0:
        return b
    side = 0
    for _ in range(40):
        if b - a <= TOL:
            break
        x = (a * fb - b * fa) / (fb - fa)
        x = min(max(x, a + TOL / 4), b - TOL / 4)
        fx = f(x)
        if fx <= 0:
            a, fa = x, fx
            fb = fb / 2 if side == -1 else fb
            side = -1
        else:
            b, fb = x, fx
            fa = fa / 2 if side == 1 else fa
            side = 1
    return a
