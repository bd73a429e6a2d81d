"""The pooled-guess test: ε(δ) lower bounds from the correct guesses at both ends of an ordering.

**The statistic.** The selection draws fix an *ordering* of the cells (most P-like first). The
certification draws of both sides are pooled and sorted by it (ties in a cell in a random order
drawn from the key); the guesser says "P" for the first ``t₁`` pooled draws, "Q" for the last
``t₂`` and abstains on the rest. ``s`` counts the correct guesses among ``t = t₁ + t₂``.

**Why it is valid** (docs/methods.md §8.1). Poissonize: certify on ``N_P ~ Poisson(λ)`` draws of P
and ``N_Q ~ Poisson(λ)`` of Q, independent of everything else (:func:`poisson_rate`; in memory λ is
set so that ``N ≤ n`` but for probability :data:`MISS`, when nothing is certified; a stream draws
exactly N). The draws are then independent Poisson processes with intensities λP and λQ. For a fixed
ε split ``P = P₁ + P₂`` with ``P₁ = min(P, e^ε Q)`` and ``Q = Q₁ + Q₂`` with ``Q₁ = min(Q, e^ε P)``;
(ε, δ)-DP both ways round says ``P₂(Ω), Q₂(Ω) ≤ δ``. Thinning gives four independent Poisson
processes, and by the marking (colouring) theorem (Kingman, *Poisson Processes*, 1993, §5.2), given
the positions of all draws and which are "dirty" (P₂, Q₂), the labels of the clean ones (P₁ and Q₁)
are independent, P with probability ``p₁/(p₁ + q₁) ∈ [1/(1 + e^ε), e^ε/(1 + e^ε)]``. So whatever the
positions and the random tie-breaks, each clean guess is correct with probability at most ``θ(ε) =
e^ε/(1 + e^ε)``, independently: the correct guesses among the clean ones are stochastically below
``Binomial(·, θ(ε))`` — the guessing game of Steinke, Nasr and Jagielski (arXiv:2305.08846v1, §3,
Thm. 3.1 for δ = 0), here with two samples instead of one run. At most ``b`` draws of both sides
together are "dirty" (``P(Poisson(2λδ) > b) ≤`` :data:`DIRTY_SHARE` of the level); each can add one
correct guess, and the worst case is the test of ``s − b`` successes in ``t − b`` trials. Then

    ε(δ) ≥ logit(θ_lo),   θ_lo = Beta⁻¹(a_j; s − b, t − s + 1)   (Clopper–Pearson),

for one tested pair ``(t₁, t₂)`` at level a. The pairs are tested in *chains* of nested guesses
(:mod:`rdpjax.rejection.chain`): along a chain the clean guesses are one sequence of independent
trials, so the largest of the chain's bounds is calibrated exactly (a boundary-crossing
probability of a Bernoulli walk) instead of by splitting a chain's level among its pairs; the
chains get their own levels ``a_j`` and hold all at once by the union bound (Σ a_j ≤ α).
Rejecting at ε means rejecting at every smaller ε, so the largest bound is a lower confidence
bound. Nothing assumes a shape of P or Q.

Since the argument holds given all positions, the tested ``(t₁, t₂)`` may depend on the pooled
counts per cell (positions without labels) as well as on the selection: here the predicted cells
are turned into pooled draws that way.

**Which (ordering, t₁, t₂) are tested, at which level** (weighted Bonferroni over chains, the
weights fixed by the selection and the pooled counts alone): each ordering of :data:`ORDERINGS`
gets its share of α; within it :data:`WINDOW_SHARE` goes to one chain per prediction of the best
pair (:func:`predict`; its :data:`WINDOW` multiples) and the rest, evenly, to three chains of a
fixed geometric grid: one-ended at each end and balanced (:func:`t_grid`). Measured on a panel
of laws in ``benchmarks/calibration/set_panel.py`` (issue 51; ``benchmarks/LOG.md``).


Host numpy; O(C) per ordering for C cells, plus the prediction's O(K²), K ≤ 500 prefixes.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rdpjax.rejection.chain import chain_ends, chain_epsilon, chain_peak

__all__ = [
    "ORDERINGS",
    "Guess",
    "Ordering",
    "Pooled",
    "orderings",
    "pooled_bound",
    "poisson_rate",
    "predict",
    "shares",
    "t_grid",
]

ORDERINGS = (("values", 0.5), ("distance from the median", 0.2), ("learned ratio", 0.3))
"""The orderings of the cells and their shares of the level: the outputs' own order (the score
when ``project=`` gives one), their distance from the selection's median, and the selection's
smoothed log ratio per cell (:func:`rdpjax.rejection.cells.cell_scores`)."""
TOP_SHARE = 0.8
"""Share of the level of the ordering predicted best on held-out selection draws."""
WINDOW = (0.5, 2**-0.5, 1.0, 2**0.5, 2.0)
"""Multiples of the predicted best ``(t₁, t₂)`` that are tested (one chain)."""
WINDOW_SHARE = 0.8
"""Share of an ordering's level spent near the prediction (the rest on the fixed grid)."""
MISS = 0.005
"""In memory: the probability that Poisson(λ) exceeds the certification draws (then nothing is
certified by this statistic; validity is unaffected)."""
NOMINAL_POWER = 0.5
"""A chain of K points weighs them by their Clopper–Pearson bounds at its level / K^this
(:func:`rdpjax.rejection.chain.chain_epsilon`); at 1 the chain is never below Bonferroni."""
DIRTY_SHARE = 0.02
"""Share of the level for the event that the δ-parts put at most ``b`` draws in all."""
GRID_DENSE, GRID_RATIO = 10, 1.2
"""The fixed grid: ``t = 1 … 10``, then a factor 1.2 apart up to all pooled draws."""
PRIOR = 0.5
"""Pseudo-draws a side added to a prefix's selection counts when predicting its θ."""
SELECTION_Z = (None, 2.0)
"""The predictions, one window each: ``None`` takes each cell's rate of right guesses from its
own (smoothed) selection counts, which finds the small pure tails of peaked ratios (a Gaussian);
2 takes each prefix's rate 2 standard errors (Wilson) below the selection's, which finds the
large sets of flat ratios (Laplace, geometric) that the selection saw more of."""


def poisson_rate(n: int, miss: float = MISS) -> float:
    """The λ with ``P(Poisson(λ) > n) = miss`` (scipy's ``pdtri``: the CDF inverted in λ)."""
    from scipy import special

    return float(special.pdtri(n, 1.0 - miss))


def t_grid(total: int) -> np.ndarray:
    """``1, …, GRID_DENSE``, then integers a factor :data:`GRID_RATIO` apart, and ``total``."""
    out = list(range(1, min(GRID_DENSE, total) + 1))
    t = float(GRID_DENSE)
    while (t := t * GRID_RATIO) < total:
        if round(t) > out[-1]:
            out.append(round(t))
    if total > out[-1]:
        out.append(total)
    return np.asarray(out, np.int64)


@dataclasses.dataclass(frozen=True)
class Ordering:
    """Cells from most P-like to most Q-like, and this ordering's share of the level."""

    name: str
    order: np.ndarray
    weight: float


def orderings(edges: np.ndarray, scores: np.ndarray, center: float) -> list[Ordering]:
    """The :data:`ORDERINGS` of the cells of ``edges`` (each in both senses by its two ends)."""
    size = edges.size + 1
    index = np.arange(size, dtype=np.float64)
    if edges.size:
        mids = np.concatenate([[edges[0]], 0.5 * (edges[1:] + edges[:-1]), [edges[-1]]])
    else:
        mids = np.zeros(1)
    keys = (index, np.abs(mids - center) + 1e-9 * index, np.asarray(scores, np.float64))
    return [
        Ordering(name, np.argsort(-key, kind="stable"), weight)
        for (name, weight), key in zip(ORDERINGS, keys, strict=True)
    ]


@dataclasses.dataclass(frozen=True)
class Guess:
    """The tested guess that certifies the largest ε: how many draws were guessed, how many right.

    Attributes:
        ordering: the ordering's name (:data:`ORDERINGS`).
        top, bottom: pooled draws guessed P (the P-like end) and Q (the other end).
        correct: correct guesses among ``top + bottom``.
        dirty: the worst-case draws of the δ-parts removed from both counts.
        level: the level of the chain of guesses it was tested in (its share of α).
        epsilon: the certified ``logit(θ_lo)``.
    """

    ordering: str
    top: int
    bottom: int
    correct: int
    dirty: int
    level: float
    epsilon: float


@dataclasses.dataclass(frozen=True)
class Pooled:
    """The pooled-guess bound: ``epsilon`` (``-inf``: nothing certified), its guess, the sizes."""

    epsilon: float
    guess: Guess | None
    rate: float
    drawn: tuple[int, int]
    tests: int


def _prefixes(size: int) -> np.ndarray:
    """Prefix lengths tried by :func:`predict`: all of them up to 300 cells.

    Beyond, 100 geometric from each end and 300 evenly spaced (a flat ratio's best guess may
    end anywhere).
    """
    if size <= 300:
        return np.arange(1, size + 1)
    ends = np.round(np.geomspace(1, size, 100)).astype(np.int64)
    return np.unique(np.concatenate([ends, size + 1 - ends, np.linspace(1, size, 300).round()]))


def _wilson(s: np.ndarray, t: np.ndarray, z: float) -> np.ndarray:
    """Wilson's lower bound on θ from ``s`` of ``t`` at ``z`` (0 where ``t = 0``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = s / t
        mid = p + z * z / (2 * t)
        half = z * np.sqrt(np.clip(p * (1 - p), 0, None) / t + z * z / (4 * t * t))
        lo = (mid - half) / (1 + z * z / t)
    return np.where(t > 0, np.nan_to_num(lo), 0.0)


def _wilson_logit(s: np.ndarray, t: np.ndarray, level: float) -> np.ndarray:
    """Logit of Wilson's lower bound on θ from ``s`` of ``t`` (fast; for predictions only)."""
    from scipy import special

    lo = _wilson(s, t, float(-special.ndtri(level)))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(lo) - np.log1p(-lo)
    return np.where((t > 0) & (s > 0) & np.isfinite(out), out, -np.inf)


def predict(
    order: np.ndarray, freqs: tuple[np.ndarray, np.ndarray, int, int], pooled: np.ndarray,
    dirty: int, alpha: float, z: float | None = 1.0,
) -> tuple[int, int, float]:  # fmt: skip
    """The predicted best guess along an ordering: pooled draws guessed at each end, and bound.

    Guessing P on the first k cells guesses their ``T_k`` pooled certification draws (counts without
    labels), of which a share ``θ_k`` is expected right, estimated from the selection's (smoothed)
    counts of those cells: ``(K_P + c)/(K_P + K_Q + 2c)`` with c = :data:`PRIOR` (a prefix the
    selection barely saw is not predicted pure) taken ``z`` Wilson standard errors low, or with
    ``z=None`` cell by cell (c spread over the cells); Q on the last cells likewise. Over disjoint
    prefixes of the two ends (:func:`_prefixes`) the pair whose bound, at a tenth of α, would be
    largest is returned as ``(t₁, t₂, bound)`` (``(0, 0, -inf)`` when none is positive).

    """
    fp, fq, m_p, m_q = freqs
    size = order.size
    ks = _prefixes(size).astype(np.int64)

    def ends(o: np.ndarray, fav: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.cumsum(pooled[o])[ks - 1]
        if z is None:  # per cell: each cell's rate from its (smoothed) counts
            rate = (fav + PRIOR / fav.size) / (fav + other + 2 * PRIOR / fav.size)
            return np.concatenate([[0.0], n]), np.concatenate(
                [[0.0], np.cumsum((pooled * rate)[o])[ks - 1]]
            )
        k_f, k_o = np.cumsum(fav[o])[ks - 1], np.cumsum(other[o])[ks - 1]
        right = n * _wilson(k_f + PRIOR, k_f + k_o + 2 * PRIOR, z)
        return np.concatenate([[0.0], n]), np.concatenate([[0.0], right])

    t1, s1 = ends(order, fp * m_p, fq * m_q)
    t2, s2 = ends(order[::-1], fq * m_q, fp * m_p)
    cells = np.concatenate([[0], ks])
    disjoint = cells[:, None] + cells[None, :] <= size
    t = t1[:, None] + t2[None, :] - dirty
    s = np.where(disjoint, s1[:, None] + s2[None, :] - dirty, 0.0)
    value = _wilson_logit(s, t, 0.1 * alpha)
    if not np.any(value > 0):
        return 0, 0, -np.inf
    i, j = np.unravel_index(int(np.argmax(value)), value.shape)
    return int(t1[i]), int(t2[j]), float(value[i, j])


def shares(honest: list[float] | None) -> np.ndarray:
    """The orderings' shares of the level.

    :data:`ORDERINGS`' weights, or :data:`TOP_SHARE` to the ordering whose held-out prediction
    is best and the rest in proportion to those weights.
    """
    base = np.asarray([w for _, w in ORDERINGS], np.float64)
    if honest is None or not np.any(np.isfinite(honest)):
        return base / base.sum()
    top = int(np.argmax(np.where(np.isfinite(honest), honest, -np.inf)))
    rest = np.delete(base, top)
    out = np.insert((1 - TOP_SHARE) * rest / rest.sum(), top, TOP_SHARE)
    return out


def _chains(
    total: int, predicted: list[tuple[int, int]]
) -> list[tuple[np.ndarray, np.ndarray, bool]]:
    """Tested chains of nested ``(t₁, t₂)``: the fixed grid's three, then one per prediction.

    The grid's chains are one-ended at the top, one-ended at the bottom and balanced
    (:func:`t_grid`); a prediction's chain is its :data:`WINDOW` multiples. ``predicted`` is in
    pooled draws (the realized pooled counts of the predicted cells): the pooled positions carry
    no labels, so tests may depend on them (module docstring). Each entry: ``(t₁, t₂, window)``.
    """
    grid = t_grid(total)
    zero = np.zeros_like(grid)
    half = grid[grid >= 2]
    out = [(grid, zero, False), (zero, grid, False), (half // 2, half - half // 2, False)]
    for guess in dict.fromkeys(predicted):
        pairs = []
        for w in sorted(WINDOW):
            a, b = (w * v for v in guess)
            if a + b > total:  # scaled up past all the draws: keep the proportions
                a, b = a * total / (a + b), b * total / (a + b)
            pairs.append((round(a), round(b)))
        pairs = sorted({p for p in pairs if 0 < p[0] + p[1] <= total})
        if pairs:
            top, bottom = (
                np.maximum.accumulate(np.asarray(v, np.int64)) for v in zip(*pairs, strict=True)
            )
            out.append((top, bottom, True))
    return out


def pooled_bound(
    rng: np.random.Generator,
    counts: tuple[np.ndarray, np.ndarray],
    rate: float,
    cell_orders: list[Ordering],
    freqs: tuple[np.ndarray, np.ndarray, int, int],
    *,
    delta: float,
    alpha: float,
    honest: list[float] | None = None,
) -> Pooled:
    """The lower bound on ε(δ) of the pooled-guess test, valid at level ``alpha``.

    Args:
        rng: randomness for the ties in a cell (from the audit's key).
        counts: Poissonized certification counts per cell, P's and Q's (each side
            ``Poisson(rate)`` draws in all).
        rate: λ, the Poisson mean of each side's certification draws.
        cell_orders: the :class:`Ordering` s tested, with their shares of the level.
        freqs: the selection's cell frequencies of P and Q and its sizes, for :func:`predict`.
        delta: the δ of ε(δ).
        alpha: the level of this statistic.
        honest: per ordering, its predicted bound judged on selection draws it was not learned
            on (:func:`shares`); ``None``: the fixed weights.

    Returns:
        :class:`Pooled`.
    """
    from scipy import stats

    cp, cq = (np.asarray(c, np.int64) for c in counts)
    total = int(cp.sum() + cq.sum())
    dirty_alpha = DIRTY_SHARE * alpha if delta > 0 else 0.0
    # P₂ and Q₂ together put Poisson(≤ 2λδ) draws in all: at most `dirty`, but for dirty_alpha.
    dirty = int(stats.poisson.isf(dirty_alpha, 2 * rate * delta)) if delta > 0 else 0
    tested = []  # (peak, ordering, top, bottom, right guesses, level) of every chain
    weights = shares(honest)
    for ordering, weight in zip(cell_orders, weights, strict=True):
        if total == 0:
            break
        guesses = [
            predict(ordering.order, freqs, cp + cq, dirty, alpha, z)[:2] for z in SELECTION_Z
        ]
        chains = _chains(total, guesses)
        share = (alpha - dirty_alpha) * weight
        n_window = sum(window for *_, window in chains)
        tops = np.concatenate([a for a, _, _ in chains])
        bottoms = np.concatenate([b for _, b, _ in chains])
        right = chain_ends(cp, cq, ordering.order, tops, bottoms, rng)  # one order for all
        cuts = np.cumsum([0] + [a.size for a, _, _ in chains])
        for (top, bottom, window), lo, hi in zip(chains, cuts[:-1], cuts[1:], strict=True):
            if n_window:
                level = share * (WINDOW_SHARE / n_window if window else (1 - WINDOW_SHARE) / 3)
            else:
                level = share / len(chains)
            s = right[lo:hi]
            nominal = level / top.size**NOMINAL_POWER
            # the chain's bound lies between its peak at the nominal level and at its own level
            peak = chain_peak(s, top + bottom, dirty, level)[0]
            tested.append((peak, ordering.name, top, bottom, s, level, nominal))
    best: Guess | None = None
    # a chain's bound is at most its peak (each point alone at the chain's level): the chains
    # whose peak cannot beat the best so far need no exact computation, nor those whose peak is
    # at most 0 (then any bound of theirs is at most 0 ≤ the true ε: it cannot be wrong)
    for peak, name, top, bottom, s, level, nominal in sorted(tested, key=lambda c: -c[0]):
        if not np.isfinite(peak) or (best is not None and peak <= best.epsilon):
            break
        if peak > 0:
            eps, j = chain_epsilon(s, top + bottom, dirty, level, nominal)
        else:  # vacuous (ε ≥ 0 always): Bonferroni over the chain, no recursion needed
            eps, j = chain_peak(s, top + bottom, dirty, level / top.size)
        if np.isfinite(eps) and (best is None or eps > best.epsilon):
            best = Guess(name, int(top[j]), int(bottom[j]), int(s[j]),
                         int(min(dirty, top[j] + bottom[j])), float(level), float(eps))  # fmt: skip
    tests = sum(c[2].size for c in tested)
    return Pooled(
        epsilon=-np.inf if best is None else best.epsilon,
        guess=best,
        rate=rate,
        drawn=(int(cp.sum()), int(cq.sum())),
        tests=tests,
    )
