"""The softmax floor and the plug-in Rényi divergence, in log space.

Kutta, Askin, Dunsche, *Lower Bounds for Rényi Differential Privacy in a Black-Box Setting*,
arXiv:2212.04739v3 (IEEE S&P 2024):

* softmax floor, eq. (13): ``t_τ = β⁻¹ log(e^{βt} + e^{βτ})``, applied to the denominator density
  only; ``t_τ ≥ τ`` and ``q_τ ≥ q``, so ``D_λ(p, q_τ) ≤ D_λ(p, q)`` (eq. (17));
* Rényi divergence, Definition 2: ``D_λ(p, q) = (λ−1)⁻¹ log ∫ p^λ q^{1−λ}``.

Densities are given as values on a grid (or a pmf on a finite support) with a cell volume
(1 for pmfs), so ``∫ f`` is the Riemann sum ``Δ · Σ_j f_j``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

from rdpjax._typing import Array, Scalar

__all__ = ["softmax_floor", "log_renyi_integral", "renyi_divergence", "plugin_divergence"]


def softmax_floor(q: Array, floor: Scalar, beta: Scalar) -> Array:
    """Softmax floor of eq. (13): ``log(e^{βq} + e^{βτ}) / β`` (≥ τ, → max(q, τ) as β → ∞)."""
    return jnp.logaddexp(beta * q, beta * floor) / beta  # Eq. (13)


def safe_log(x: Array) -> tuple[Array, Array]:
    """``(log x, x > 0)`` with a finite gradient where x = 0 (the double-where trick)."""
    positive = x > 0
    return jnp.log(jnp.where(positive, x, 1.0)), positive


def log_renyi_integral(p: Array, q: Array, lam: Scalar, cell_volume: Scalar = 1.0) -> Array:
    """``log ∫ p^λ q^{1−λ}`` by ``logsumexp``; cells with ``p = 0`` add nothing.

    ``q`` must be positive wherever ``p`` is (true for a floored ``q``).
    """
    log_p, positive = safe_log(p)
    log_q, _ = safe_log(q)
    terms = jnp.where(positive, lam * log_p + (1.0 - lam) * log_q, -jnp.inf)
    return logsumexp(terms) + jnp.log(cell_volume)


def renyi_divergence(p: Array, q: Array, lam: Scalar, cell_volume: Scalar = 1.0) -> Array:
    """``D_λ(p, q) = (λ−1)⁻¹ log ∫ p^λ q^{1−λ}`` (Definition 2 of arXiv:2212.04739)."""
    return log_renyi_integral(p, q, lam, cell_volume) / (lam - 1.0)


def plugin_divergence(
    p_hat: Array,
    q_hat: Array,
    lam: Scalar,
    floor: Scalar,
    beta: Scalar,
    cell_volume: Scalar = 1.0,
) -> Array:
    """The estimator ``D_λ(p̂, q̂_τ)`` of eq. (14)–(16): the floor on the denominator only.

    This is the functional ``F(p̂, q̂)`` whose gradient :mod:`rdpjax.estimator.variance` uses.
    """
    return renyi_divergence(p_hat, softmax_floor(q_hat, floor, beta), lam, cell_volume)


# Exposed for callers that vmap over orders: one compiled kernel for a vector of λ.
plugin_divergence_orders = jax.vmap(plugin_divergence, in_axes=(None, None, 0, None, None, None))
