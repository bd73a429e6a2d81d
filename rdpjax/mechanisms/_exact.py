"""Host-side float64 building blocks for the exact divergences of the zoo.

Everything here is numpy/scipy on the host, in log space, and returns Python floats. None of it is
traced: exact divergences are oracles for the estimator, not part of a hot path.

* closed forms for additive Laplace and Gaussian noise and for binary randomized response;
* ``renyi_from_logpmf``: D_λ between two pmfs given as log-probabilities (enumeration);
* ``log_integral``: log ∫ exp(f) by composite Gauss–Legendre quadrature between breakpoints, for
  piecewise-smooth integrands (kinks of Laplace densities and CDFs, indicator jumps).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from rdpjax.mechanisms.checks import finite_or_inf

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(24)
_NEG_INF = -np.inf


def laplace_renyi(lam: float, shift: float, scale: float) -> float:
    """``D_λ(Lap(shift, b) ‖ Lap(0, b))``, Mironov (2017, Prop. 6); eq. above (22) of 000.

    ``1/(λ−1) log{ λ/(2λ−1) e^{(λ−1)δ/b} + (λ−1)/(2λ−1) e^{−λδ/b} }`` with ``δ = |shift|``;
    ``D_∞ = δ/b``.
    """
    delta = abs(float(shift)) / float(scale)
    if math.isinf(lam):
        return delta
    log_i = np.logaddexp(
        math.log(lam / (2 * lam - 1)) + (lam - 1) * delta,
        math.log((lam - 1) / (2 * lam - 1)) - lam * delta,
    )
    return finite_or_inf(float(log_i) / (lam - 1), "Laplace divergence")


def gaussian_renyi(lam: float, shift_sq: float, scale: float) -> float:
    """``D_λ(N(μ, b² I) ‖ N(μ', b² I)) = λ ‖μ − μ'‖² / (2 b²)``; ``D_∞ = ∞`` unless μ = μ'."""
    if math.isinf(lam):
        return 0.0 if shift_sq == 0 else math.inf
    return lam * float(shift_sq) / (2.0 * float(scale) ** 2)


def rr_renyi(lam: float, eps0: float) -> float:
    """Binary randomized response with keep probability ``a = e^{ε0}/(1+e^{ε0})``, one bit.

    ``1/(λ−1) log{ a^λ (1−a)^{1−λ} + (1−a)^λ a^{1−λ} }`` (000, Randomized Response); D_∞ = ε0.
    """
    if math.isinf(lam):
        return float(eps0)
    log_a = -np.logaddexp(0.0, -eps0)  # log e^ε/(1+e^ε)
    log_1ma = -np.logaddexp(0.0, eps0)  # log 1/(1+e^ε)
    log_i = np.logaddexp(lam * log_a + (1 - lam) * log_1ma, lam * log_1ma + (1 - lam) * log_a)
    return finite_or_inf(float(log_i) / (lam - 1), "randomized-response divergence")


def renyi_from_logpmf(lam: float, log_p: np.ndarray, log_q: np.ndarray) -> float:
    """``D_λ(p ‖ q)`` for pmfs on a common finite support, from log-probabilities.

    Cells with ``p = 0`` add nothing; a cell with ``p > 0 = q`` makes the divergence infinite.
    ``λ = ∞`` gives ``max log(p/q)`` over the support of p.
    """
    from scipy.special import logsumexp  # here, not at import: 0.2 s

    log_p = np.asarray(log_p, dtype=np.float64)
    log_q = np.asarray(log_q, dtype=np.float64)
    support = log_p > _NEG_INF
    if np.any(log_q[support] == _NEG_INF):
        return math.inf
    lp, lq = log_p[support], log_q[support]
    if math.isinf(lam):
        return finite_or_inf(float(np.max(lp - lq)), "D_inf")
    log_i = logsumexp(lam * lp + (1 - lam) * lq)
    return finite_or_inf(float(log_i) / (lam - 1), "pmf divergence")


def quadrature_nodes(
    lo: float, hi: float, breakpoints: Sequence[float] = (), max_width: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre nodes and log-weights on ``[lo, hi]``.

    Panels end at every breakpoint inside the interval (so kinks and jumps fall on panel edges,
    where 24-point Gauss–Legendre is exact to rounding for the smooth pieces met here) and are at
    most ``max_width`` wide. Cost O(#panels · 24).
    """
    edges = {float(lo), float(hi)}
    edges.update(float(b) for b in breakpoints if lo < b < hi)
    edges = np.array(sorted(edges))
    if max_width is not None:
        pieces = []
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            count = max(1, math.ceil((b - a) / max_width))
            pieces.append(np.linspace(a, b, count + 1)[:-1])
        edges = np.concatenate([*pieces, edges[-1:]])
    a, b = edges[:-1, None], edges[1:, None]
    half = (b - a) / 2.0
    nodes = (a + b) / 2.0 + half * _GL_NODES[None, :]
    log_w = np.log(half) + np.log(_GL_WEIGHTS)[None, :]
    return nodes.ravel(), log_w.ravel()


def renyi_from_logdensity(
    lam: float,
    log_p: Callable[[np.ndarray], np.ndarray],
    log_q: Callable[[np.ndarray], np.ndarray],
    lo: float,
    hi: float,
    breakpoints: Sequence[float] = (),
    max_width: float | None = None,
) -> float:
    """``D_λ(p ‖ q)`` for 1-D densities by log-space quadrature of ``p^λ q^{1−λ}`` on [lo, hi].

    The caller picks ``[lo, hi]`` wide enough that the neglected tails are below rounding.
    """
    from scipy.special import logsumexp  # here, not at import: 0.2 s

    t, log_w = quadrature_nodes(lo, hi, breakpoints, max_width)
    lp, lq = log_p(t), log_q(t)
    support = lp > _NEG_INF
    if np.any(lq[support] == _NEG_INF):
        return math.inf
    log_i = logsumexp(lam * lp[support] + (1 - lam) * lq[support] + log_w[support])
    return finite_or_inf(float(log_i) / (lam - 1), "quadrature divergence")


def log_mixture_density(
    t: np.ndarray,
    atoms: np.ndarray,
    log_weights: np.ndarray,
    log_kernel: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """``log Σ_s w_s K(t − a_s)`` for a finite mixture of shifted kernels (1-D)."""
    from scipy.special import logsumexp  # here, not at import: 0.2 s

    return logsumexp(log_weights[None, :] + log_kernel(t[:, None] - atoms[None, :]), axis=1)


def log_laplace_pdf(u: np.ndarray, scale: float) -> np.ndarray:
    return -np.abs(u) / scale - math.log(2.0 * scale)


def log_gaussian_pdf(u: np.ndarray, scale: float) -> np.ndarray:
    return -0.5 * (u / scale) ** 2 - math.log(scale) - 0.5 * math.log(2.0 * math.pi)


def log_laplace_cdf(u: np.ndarray, scale: float) -> np.ndarray:
    """``log P(L ≤ u)`` for ``L ~ Lap(0, scale)``, accurate in both tails."""
    z = np.asarray(u, dtype=np.float64) / scale
    return np.where(z < 0, z - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(z))))


def log_laplace_sf(u: np.ndarray, scale: float) -> np.ndarray:
    """``log P(L ≥ u)``."""
    return log_laplace_cdf(-np.asarray(u, dtype=np.float64), scale)


def log_ndtr_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log(Φ(b) − Φ(a))`` for ``a < b``, stable in both tails (reflect when a > 0)."""
    from scipy.special import log_ndtr  # here, not at import: 0.2 s

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    flip = a > 0
    lo = np.where(flip, -b, a)
    hi = np.where(flip, -a, b)
    lhi, llo = log_ndtr(hi), log_ndtr(lo)
    return lhi + np.log1p(-np.exp(llo - lhi))


def subset_sum_law(values: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Law of ``Σ_i Z_i v_i`` with ``Z_i ~ Bern(rate)`` i.i.d., as (atoms, log-weights).

    Dynamic programming over the entries, merging equal sums (rounded to 1e-12), so databases in
    {0,1}^m cost O(m²) instead of 2^m. ``values`` has shape ``(m,)`` or ``(m, d)``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    law: dict[tuple[float, ...], tuple[np.ndarray, float]] = {
        (0.0,) * values.shape[1]: (np.zeros(values.shape[1]), 0.0)
    }
    log_keep, log_drop = math.log(rate), math.log1p(-rate) if rate < 1 else _NEG_INF
    for v in values:
        new: dict[tuple[float, ...], tuple[np.ndarray, float]] = {}
        for atom, lw in law.values():
            for shifted, step in ((atom, log_drop), (atom + v, log_keep)):
                if step == _NEG_INF:
                    continue
                k = tuple(np.round(shifted, 12))
                old = new.get(k)
                new[k] = (shifted, lw + step if old is None else np.logaddexp(old[1], lw + step))
        law = new
        if len(law) > 1 << 14:
            raise ValueError("subset-sum law has more than 16384 atoms; database too varied")
    atoms = np.array([a for a, _ in law.values()])
    log_w = np.array([w for _, w in law.values()])
    return atoms, log_w
