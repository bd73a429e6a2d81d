"""Noisy gradient descent on a quadratic loss (paper 000, Sec. V, "Noisy Gradient Descent").

Loss ``L_x(θ) = (1/m) Σ_i ½(θ − x_i)²``, ``θ_0 = 0``, Θ = ℝ (no projection), and the update of
Algorithm 1 of Chourasia et al. as used by 000 (docs/methods.md §3):

    θ_{k+1} = θ_k − η ∇L_x(θ_k) + √(2η) Y_k,   Y_k ~ N(0, b²) i.i.d.,   output θ_K.

Since ``∇L_x(θ) = θ − x̄``, ``θ_K ~ N(x̄ (1 − (1−η)^K), 2b²(1 − (1−η)^{2K}) / (2−η))``, so the exact
divergence is the Gaussian one, ``λ Δ² / (2σ²)``; on pair (21) it equals the closed form of 000,
``λ/(4b²m²) · (2−η)/(1+(1−η)^K) · (1−(1−η)^K)``.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from rdpjax.mechanisms import _exact, _random
from rdpjax.mechanisms.base import Mechanism, OutputSpec, continuous, pytree_dataclass, static_field
from rdpjax.mechanisms.checks import (
    as_database,
    check_int,
    check_lam,
    check_positive,
    check_range,
    host_database,
    scalar_param,
)
from rdpjax.mechanisms.databases import paper_pair

__all__ = ["NoisyGradientDescent", "paper_closed_form"]


@pytree_dataclass
class NoisyGradientDescent(Mechanism):
    """Noisy gradient descent, K steps on the quadratic loss (000; η = 0.2, b = 1, K = 10).

    Args:
        step_size: the learning rate η ∈ (0, 2) (a pytree leaf; the iteration contracts there).
        noise: the standard deviation b > 0 of ``Y_k`` (a pytree leaf).
        steps: the number of iterations K ≥ 1 (static).

    ``sample`` runs the K updates for n independent chains at once (``lax.scan`` over the steps;
    cost n·K normal draws) and returns ``θ_K``, shape ``(n,)``.
    """

    paper = "Kutta, Askin, Dunsche, arXiv:2212.04739, Sec. V"
    step_size: Any
    noise: Any
    steps: int = static_field()

    def __post_init__(self) -> None:
        check_range("step_size", self.step_size, low=0.0, high=2.0)
        check_positive("noise", self.noise)
        check_int("steps", self.steps, 1)

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is a non-empty array of shape ``(m,)``."""
        as_database(database, ndims=(1,))

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        x_bar = jnp.mean(as_database(database, ndims=(1,)))
        eta = jnp.asarray(self.step_size, dtype=x_bar.dtype)
        noise_scale = jnp.sqrt(2.0 * eta) * jnp.asarray(self.noise, dtype=x_bar.dtype)
        theta0 = jnp.zeros((n,), dtype=x_bar.dtype)
        init = (theta0, x_bar, eta, noise_scale)
        (theta, *_), _ = jax.lax.scan(_gd_step, init, jax.random.split(key, self.steps))
        return theta

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Continuous scalar outputs ``θ_K``."""
        return continuous(1)

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Pair (21) of 000 (m = 10)."""
        return paper_pair()

    def law(self, database: Any) -> tuple[float, float]:
        """Exact mean and variance of ``θ_K`` (host floats)."""
        x_bar = float(host_database(database, ndims=(1,)).mean())
        eta, b = scalar_param("step_size", self.step_size), scalar_param("noise", self.noise)
        r = 1.0 - eta
        mean = x_bar * (1.0 - r**self.steps)
        var = 2.0 * b * b * (1.0 - r ** (2 * self.steps)) / (2.0 - eta)
        return mean, var

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ = λ (μ_x − μ_x')² / (2σ²)`` of the two Gaussian laws of ``θ_K``."""
        lam = check_lam(lam)
        (mean_p, var), (mean_q, _) = self.law(x), self.law(x_prime)
        return _exact.gaussian_renyi(lam, (mean_p - mean_q) ** 2, math.sqrt(var))


def _gd_step(carry, key_k):
    """θ ← θ − η (θ − x̄) + √(2η) b Y (module level, so eager scans hit the cache)."""
    theta, x_bar, eta, noise_scale = carry
    gradient = theta - x_bar  # ∇L_x(θ) for the quadratic loss
    noise = noise_scale * _random.normal(key_k, theta.shape, theta.dtype)
    return (theta - eta * gradient + noise, x_bar, eta, noise_scale), None


def paper_closed_form(lam: float, step_size: float, noise: float, steps: int, m: int) -> float:
    """000's formula for pair (21): ``λ/(4b²m²) · (2−η)/(1+(1−η)^K) · (1−(1−η)^K)``."""
    r = (1.0 - step_size) ** steps
    return lam / (4.0 * noise**2 * m**2) * (2.0 - step_size) / (1.0 + r) * (1.0 - r)
