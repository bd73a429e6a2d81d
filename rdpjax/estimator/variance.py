"""The delta-method variance of the plug-in divergence: eq. (18), and by automatic differentiation.

Kutta, Askin, Dunsche, arXiv:2212.04739v3, eq. (18): with ``I = ∫ p̂^λ q̂_τ^{1−λ}`` and
``π(t) = sigmoid(β(t − τ))`` the derivative of the softmax floor,

    σ̂² = (S1 + S2) / ((λ−1) I)²,
    S1 = λ² (∫ p̂^{2λ−1} q̂_τ^{2−2λ} − I²),
    S2 = (1−λ)² (∫ π(q̂)² q̂_τ^{−2λ} q̂ p̂^{2λ} − (∫ π(q̂) q̂_τ^{−λ} q̂ p̂^λ)²).

S1 is the contribution of the p-sample and S2 of the q-sample, so with sizes n and n' the
squared standard error is ``σ̂_p²/n + σ̂_q²/n'`` with ``σ̂_p² = S1/((λ−1)I)²`` and
``σ̂_q² = S2/((λ−1)I)²`` (docs/methods.md §2.3; for n = n' this is eq. (16)'s ``σ̂²/n``).

The autodiff path (docs/methods.md §2.4) differentiates the plug-in functional ``F(p̂, q̂)`` with
``jax.grad`` and forms the influence of one observation, ``ψ_p(x) = Σ_j ∂F/∂p̂_j K_h(t_j − x)``
(the gradient smoothed by the same kernel), then ``σ̂_p² = Var_{X∼p̂} ψ_p(X)``. For a kernel shrunk
to a point, ``ψ_p = ∂F/∂p̂ / Δ`` and the result equals eq. (18) exactly; at finite h it is the
delta-method variance of the estimator actually computed. It serves any functional ``F``.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

from rdpjax._typing import Array, Scalar
from rdpjax.estimator.divergence import safe_log, softmax_floor

__all__ = ["variance_eq18", "influence_variance", "variance_autodiff"]


def _log_integral(log_terms: Array, positive: Array, log_cell: Array) -> Array:
    return logsumexp(jnp.where(positive, log_terms, -jnp.inf)) + log_cell


def variance_eq18(
    p: Array,
    q: Array,
    lam: Scalar,
    floor: Scalar,
    beta: Scalar,
    cell_volume: Scalar = 1.0,
) -> tuple[Array, Array]:
    """Eq. (18), split into its p part and its q part, evaluated in log space.

    Args:
      p: density values of p̂ on a grid, or a pmf (``cell_volume=1``).
      q: density values of q̂ (unfloored) on the same grid, or a pmf.
      lam: the order λ > 1.
      floor: τ of the softmax floor.
      beta: β of the softmax floor.
      cell_volume: Δ of the Riemann sums.

    Returns:
      ``(var_p, var_q)`` = ``(S1, S2) / ((λ−1) I)²``.
    """
    log_cell = jnp.log(cell_volume)
    log_p, pos = safe_log(p)
    log_q, qpos = safe_log(q)
    log_qt = jnp.log(softmax_floor(q, floor, beta))
    log_pi = jax.nn.log_sigmoid(beta * (q - floor))  # log π(q̂)
    log_i = _log_integral(lam * log_p + (1 - lam) * log_qt, pos, log_cell)
    log_j1 = _log_integral((2 * lam - 1) * log_p + (2 - 2 * lam) * log_qt, pos, log_cell)
    both = pos & qpos
    log_j2 = _log_integral(2 * log_pi - 2 * lam * log_qt + log_q + 2 * lam * log_p, both, log_cell)
    log_j3 = _log_integral(log_pi - lam * log_qt + log_q + lam * log_p, both, log_cell)
    # S1 / ((λ−1) I)² = (λ/(λ−1))² (J1/I² − 1)                                       # Eq. (18)
    var_p = (lam / (lam - 1)) ** 2 * jnp.expm1(log_j1 - 2 * log_i)
    # S2 / ((λ−1) I)² = (J2 − J3²) / I²                                               # Eq. (18)
    var_q = jnp.exp(2 * (log_j3 - log_i)) * jnp.expm1(log_j2 - 2 * log_j3)
    var_q = jnp.where(jnp.any(both), var_q, 0.0)
    return jnp.maximum(var_p, 0.0), jnp.maximum(var_q, 0.0)


def influence_variance(
    grad: Array,
    density: Array,
    cell_volume: Scalar,
    smooth_fn: Callable[[Array], Array] | None = None,
) -> Array:
    """``Var_{X∼f} ψ(X)`` with ``ψ = smooth(grad) / Δ`` evaluated on the grid, weights ``f Δ``.

    Args:
      grad: ``∂F/∂f_j`` on the grid.
      density: the density values f (weights ``f_j Δ`` sum to one).
      cell_volume: Δ.
      smooth_fn: the (self-adjoint) kernel smoothing; ``None`` for the identity (pmfs, h → 0).
    """
    psi = (grad if smooth_fn is None else smooth_fn(grad)) / cell_volume
    w = density * cell_volume
    mean = jnp.sum(w * psi)
    return jnp.maximum(jnp.sum(w * (psi - mean) ** 2), 0.0)


def variance_autodiff(
    functional: Callable[[Array, Array], Array],
    p: Array,
    q: Array,
    cell_volume: Scalar = 1.0,
    smooth_fn: Callable[[Array], Array] | None = None,
) -> tuple[Array, Array, Array]:
    """Delta-method variance of ``functional(p, q)`` by automatic differentiation (§2.4).

    Args:
      functional: ``F(p, q) -> scalar`` on density values (e.g.
        :func:`rdpjax.estimator.divergence.plugin_divergence` with λ, τ, β, Δ bound).
      p: the estimated density p̂ on the grid (or a pmf).
      q: the estimated density q̂ on the grid (or a pmf).
      cell_volume: Δ.
      smooth_fn: the kernel smoothing that produced p and q from binned counts (``None`` for
        relative frequencies).

    Returns:
      ``(value, var_p, var_q)``: F and the per-observation variances of the p- and q-samples.
    """
    value, (g_p, g_q) = jax.value_and_grad(functional, argnums=(0, 1))(p, q)
    var_p = influence_variance(g_p, p, cell_volume, smooth_fn)
    var_q = influence_variance(g_q, q, cell_volume, smooth_fn)
    return value, var_p, var_q
