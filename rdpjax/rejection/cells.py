"""Cells of the output space and their estimated log density ratio, from the selection draws.

The candidate rejection sets are unions of cells, so that certifying a set only needs the count
of certification draws in each cell (in memory, or by the stream's integer-code counting at any
n). The cells are fixed by the selection draws alone, before the certification draws exist.

* **Edges.** Quantiles of the pooled selection draws at levels spaced evenly in logit,
  ``u_j = σ(t_j)``, ``t_j`` evenly spaced on ``[−L, L]`` with ``L = log m`` (m pooled draws):
  the cell masses fall off geometrically towards both tails, so a tail set of mass 1/m is
  still resolved (a set certified at small δ lives there). Quantiles are taken with
  ``method="inverted_cdf"``, so edges are draws: integer codes and other atoms get a cell each.
  Cell ``i`` is ``[e_{i−1}, e_i)`` with ``e_{−1} = −∞`` and ``e_C = +∞``.
* **Scores.** ``s_i = log p̂_i − log q̂_i`` from the selection counts, with a small pseudo-count
  (no ``log 0``) and, for continuous outputs, the counts first smoothed over neighbouring cells
  by a discrete Gaussian kernel (the cells are narrow where the draws are dense, so this is a
  variable-bandwidth kernel estimate of the ratio). Atoms are not smoothed. Ordering cells by
  ``s`` and taking prefixes gives the likelihood-ratio (Neyman–Pearson) sets of the estimate.

All numpy on the host: O(m log m) for the edges, O(C) for the scores.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_CELLS", "cell_codes", "cell_edges", "cell_scores", "default_cells"]

MAX_CELLS = 4096
"""Most cells a selection can define (the streamed count keeps one float64 per cell)."""

_PER_CELL = 16
"""Pooled selection draws per cell by default (at least 16 cells, at most MAX_CELLS)."""

_PRIOR = 0.05
"""Pseudo-count added to each side, as a share of the cell's pooled (smoothed) count."""


def default_cells(m_pooled: int) -> int:
    """``clip(m / 16, 16, MAX_CELLS)`` cells for ``m`` pooled selection draws."""
    return int(np.clip(m_pooled // _PER_CELL, 16, MAX_CELLS))


def cell_edges(pooled: np.ndarray, cells: int) -> np.ndarray:
    """Increasing, distinct edges (at most ``cells − 1``) from the pooled selection draws.

    Args:
        pooled: 1-D selection draws of both sides together (finite).
        cells: the number of cells wanted, ≥ 2 (fewer result when the draws have few atoms).

    Returns:
        float64 edges ``e_0 < … < e_{C−2}``: the cells are ``(−∞, e_0)``, ``[e_0, e_1)``, …,
        ``[e_{C−2}, ∞)``.
    """
    x = np.asarray(pooled, np.float64).ravel()
    span = np.log(max(x.size, 2))
    levels = 1.0 / (1.0 + np.exp(-np.linspace(-span, span, cells - 1)))
    return np.unique(np.quantile(x, levels, method="inverted_cdf"))


def cell_codes(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The cell of each output: ``i`` such that ``e_{i−1} ≤ x < e_i`` (int64 in [0, C))."""
    return np.searchsorted(edges, np.asarray(x, np.float64).ravel(), side="right")


def _smooth(counts: np.ndarray, width: float) -> np.ndarray:
    """``counts`` convolved with a discrete Gaussian of ``width`` cells (mass kept at edges)."""
    if width <= 0:
        return counts
    radius = int(np.ceil(3 * width))
    t = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (t / width) ** 2)
    padded = np.pad(counts, radius, mode="reflect" if counts.size > radius else "edge")
    return np.convolve(padded, kernel / kernel.sum(), mode="valid")


def cell_scores(
    counts_p: np.ndarray, counts_q: np.ndarray, *, smooth: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(log p̂ − log q̂, p̂, q̂)`` per cell from selection counts, smoothed over neighbours.

    The ratio adds to each side a pseudo-count of :data:`_PRIOR` times the cell's pooled count
    (and 10⁻³, for cells with none): proportional to the cell, so that many sparse tail cells
    do not pile up pseudo-mass where one side has none, and no ``log 0``.

    Args:
        counts_p: selection counts per cell of P's draws.
        counts_q: the same for Q's.
        smooth: Gaussian kernel width in cells (0: none, for atoms).

    Returns:
        float64 scores, one per cell (a larger score is more evidence of P over Q), and the
        smoothed cell frequencies p̂ and q̂ (no pseudo-counts; each sums to 1).
    """
    kp = _smooth(np.asarray(counts_p, np.float64), smooth)
    kq = _smooth(np.asarray(counts_q, np.float64), smooth)
    prior = _PRIOR * (kp + kq) / 2.0 + 1e-3
    p, q = kp / kp.sum(), kq / kq.sum()
    score = np.log((kp + prior) / (kp.sum() + prior.sum())) - np.log(
        (kq + prior) / (kq.sum() + prior.sum())
    )
    return score, p, q
