"""Truncated Laplace and Gaussian local mechanisms (paper 001, Gorla et al., arXiv:2208.14414).

The input (the "database") is a location ``μ ∈ [low, high]``, a scalar; the output is one draw
from the Laplace (scale B) or Gaussian (standard deviation s) law centred at μ and truncated to
``[low, high]`` (001, Sec. "Experiments"; docs/methods.md §4 for [0, 1]):

    Laplace:  p_μ(y) = K_μ e^{−|y−μ|/B},  K_μ = 1 / (B(2 − e^{−(μ−low)/B} − e^{−(high−μ)/B})),
    Gaussian: p_μ(y) = φ((y−μ)/s) / (s Z_μ),  Z_μ = Φ((high−μ)/s) − Φ((low−μ)/s).

Exact divergences, any pair of locations (derived here; both checked against quadrature):
* Laplace: ``log p^λ q^{1−λ}`` is piecewise linear in y with kinks at μ, μ', so the integral is a
  sum of closed-form exponential integrals. For ``(low, high) = (0, 1)`` and the pair (0, 1) it is
  the formula of 001 (docs/methods.md §4),
  ``1/(λ−1) log[(e^{(λ−1)/B} − e^{−λ/B}) / ((1 − e^{−1/B})(2λ−1))]``.
* Gaussian: ``φ_s(y−μ)^λ φ_s(y−μ')^{1−λ} = φ_s(y − μ_λ) e^{λ(λ−1)(μ−μ')²/(2s²)}`` with
  ``μ_λ = λμ + (1−λ)μ'``, so ``log I = λ(λ−1)Δ²/(2s²) + log(Φ((high−μ_λ)/s) − Φ((low−μ_λ)/s))
  − λ log Z_μ − (1−λ) log Z_μ'``.

Pure LDP levels (sup over locations and outputs; attained at μ = low, μ' = high, an output at an
endpoint; derived, checked on a grid in the tests): ``(high − low)/B`` for Laplace (001: ``1/B``
on [0, 1]) and ``(high − low)²/(2s²)`` for Gaussian.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact
from rdpjax.mechanisms.base import Mechanism, OutputSpec, continuous, pytree_dataclass
from rdpjax.mechanisms.checks import (
    check_lam,
    check_positive,
    concrete,
    finite_or_inf,
    param_value,
    scalar_param,
)

__all__ = ["TruncatedGaussian", "TruncatedLaplace", "paper_closed_form"]


class _Truncated(Mechanism):
    """Shared parts: validation, the location input, the reference pair."""

    paper = "Gorla et al., arXiv:2208.14414"

    def __post_init__(self) -> None:
        check_positive("scale", self.scale)
        lo, hi = concrete(self.low), concrete(self.high)
        for name, value in (("low", lo), ("high", hi)):
            if value is not None and not np.all(np.isfinite(value)):
                raise ValueError(f"{name} must be finite; got {value!r}")
        if lo is not None and hi is not None and not np.all(lo < hi):
            raise ValueError(f"need low < high; got low={self.low!r}, high={self.high!r}")

    def _location(self, database: Any) -> jax.Array:
        """The location μ (shape () or (1,)), clipped to [low, high] when traced."""
        mu = jnp.asarray(database)
        if mu.size != 1:
            raise ValueError(f"database must be one location (shape () or (1,)); got {mu.shape}")
        value = concrete(database)
        lo, hi = concrete(self.low), concrete(self.high)
        if value is not None and lo is not None and hi is not None:
            if not np.all((lo <= value) & (value <= hi)):
                raise ValueError(f"location must lie in [low, high]; got {database!r}")
        mu = mu.reshape(()).astype(float)
        return jnp.clip(mu, jnp.asarray(self.low), jnp.asarray(self.high))

    def _host(self, x: Any) -> float:
        if isinstance(x, jax.core.Tracer):
            raise ValueError("divergence needs concrete locations")
        mu = np.asarray(x, dtype=np.float64)
        if mu.size != 1:
            raise ValueError(f"a location has shape () or (1,); got {mu.shape}")
        lo, hi = scalar_param("low", self.low), scalar_param("high", self.high)
        mu = float(mu.reshape(()))
        if not lo <= mu <= hi:
            raise ValueError(f"location must lie in [low, high] = [{lo}, {hi}]; got {mu}")
        return mu

    def check_database(self, database: jax.Array) -> None:
        self._location(database)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        return continuous(1)

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Locations ``(low, high)``: the pair of 001 (0 vs 1), where the LDP level is attained."""
        return jnp.asarray(self.low, dtype=float), jnp.asarray(self.high, dtype=float)


@pytree_dataclass
class TruncatedLaplace(_Truncated):
    """Laplace of scale B centred at the input, truncated to [low, high] (001).

    Args:
        scale: B > 0 (a pytree leaf).
        low, high: the output interval (pytree leaves), default [0, 1].

    ``sample`` draws by inverse CDF (side of μ, then a truncated exponential), reparameterized so
    that ``grad`` over ``scale`` works. Output shape ``(n,)``.
    """

    scale: Any
    low: Any = 0.0
    high: Any = 1.0

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        mu = self._location(database)
        scale, low, high = jnp.asarray(self.scale), jnp.asarray(self.low), jnp.asarray(self.high)
        d_low, d_high = (mu - low) / scale, (high - mu) / scale
        mass_low, mass_high = -jnp.expm1(-d_low), -jnp.expm1(-d_high)  # ∝ P(y < μ), P(y > μ)
        key_side, key_dist = jax.random.split(key)
        left = jax.random.uniform(key_side, (n,)) * (mass_low + mass_high) < mass_low
        u = jax.random.uniform(key_dist, (n,))
        # Inverse CDF of the unit exponential truncated to [0, d]: −log(1 − u(1 − e^{−d})).
        dist = -jnp.log1p(u * jnp.expm1(-jnp.where(left, d_low, d_high)))
        y = mu + scale * jnp.where(left, -dist, dist)
        return jnp.clip(y, low, high)

    def _log_k(self, mu: float, scale: float, lo: float, hi: float) -> float:
        mass = -math.expm1(-(mu - lo) / scale) - math.expm1(-(hi - mu) / scale)
        return -math.log(scale) - math.log(mass)  # log K_μ

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ`` by piecewise exponential integration (closed form; any locations)."""
        lam = check_lam(lam)
        mu_p, mu_q = self._host(x), self._host(x_prime)
        scale = scalar_param("scale", self.scale)
        lo, hi = scalar_param("low", self.low), scalar_param("high", self.high)
        log_kp, log_kq = self._log_k(mu_p, scale, lo, hi), self._log_k(mu_q, scale, lo, hi)

        def log_ratio(y: float) -> float:
            return log_kp - log_kq - (abs(y - mu_p) - abs(y - mu_q)) / scale

        edges = sorted({lo, hi, mu_p, mu_q})
        if math.isinf(lam):  # piecewise linear: the sup is at an edge
            return finite_or_inf(max(log_ratio(y) for y in edges), "D_inf")
        pieces = []
        for a, c in zip(edges[:-1], edges[1:], strict=True):
            mid = 0.5 * (a + c)
            sign_p, sign_q = math.copysign(1.0, mid - mu_p), math.copysign(1.0, mid - mu_q)
            slope = (-lam * sign_p - (1 - lam) * sign_q) / scale
            start = lam * (log_kp - abs(a - mu_p) / scale) + (1 - lam) * (
                log_kq - abs(a - mu_q) / scale
            )
            pieces.append(start + _log_exp_integral(slope, c - a))
        log_i = float(np.logaddexp.reduce(pieces))
        return finite_or_inf(log_i / (lam - 1), "truncated Laplace divergence")

    @property
    def epsilon(self) -> float | None:
        """LDP level ``(high − low)/B``."""
        scale, lo, hi = param_value(self.scale), param_value(self.low), param_value(self.high)
        if scale is None or lo is None or hi is None:
            return None
        return (hi - lo) / scale


@pytree_dataclass
class TruncatedGaussian(_Truncated):
    """Gaussian of standard deviation s centred at the input, truncated to [low, high] (001).

    Args:
        scale: s > 0 (a pytree leaf).
        low, high: the output interval (pytree leaves), default [0, 1].

    ``sample`` uses ``jax.random.truncated_normal`` (inverse CDF; the interval always contains
    the mode, so float32 is well conditioned). Output shape ``(n,)``.
    """

    scale: Any
    low: Any = 0.0
    high: Any = 1.0

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        mu = self._location(database)
        scale, low, high = jnp.asarray(self.scale), jnp.asarray(self.low), jnp.asarray(self.high)
        z = jax.random.truncated_normal(key, (low - mu) / scale, (high - mu) / scale, (n,))
        return jnp.clip(mu + scale * z, low, high)

    def log_normalizer(self, mu: float) -> float:
        """``log Z_μ = log(Φ((high−μ)/s) − Φ((low−μ)/s))``."""
        scale = scalar_param("scale", self.scale)
        lo, hi = scalar_param("low", self.low), scalar_param("high", self.high)
        return float(_exact.log_ndtr_diff((lo - mu) / scale, (hi - mu) / scale))

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ`` in closed form (module docstring); any pair of locations."""
        lam = check_lam(lam)
        mu_p, mu_q = self._host(x), self._host(x_prime)
        scale = scalar_param("scale", self.scale)
        lo, hi = scalar_param("low", self.low), scalar_param("high", self.high)
        log_zp, log_zq = self.log_normalizer(mu_p), self.log_normalizer(mu_q)
        if math.isinf(lam):  # log ratio is linear in y: the sup is at an endpoint
            ratios = [
                ((y - mu_q) ** 2 - (y - mu_p) ** 2) / (2 * scale**2) + log_zq - log_zp
                for y in (lo, hi)
            ]
            return finite_or_inf(max(ratios), "D_inf")
        mu_lam = lam * mu_p + (1 - lam) * mu_q
        log_i = (
            lam * (lam - 1) * (mu_p - mu_q) ** 2 / (2 * scale**2)
            + float(_exact.log_ndtr_diff((lo - mu_lam) / scale, (hi - mu_lam) / scale))
            - lam * log_zp
            - (1 - lam) * log_zq
        )
        return finite_or_inf(log_i / (lam - 1), "truncated Gaussian divergence")

    @property
    def epsilon(self) -> float | None:
        """LDP level ``(high − low)² / (2 s²)``."""
        scale, lo, hi = param_value(self.scale), param_value(self.low), param_value(self.high)
        if scale is None or lo is None or hi is None:
            return None
        return (hi - lo) ** 2 / (2 * scale**2)


def _log_exp_integral(slope: float, width: float) -> float:
    """``log ∫_0^w e^{s t} dt``, stable for either sign of s."""
    if slope == 0:
        return math.log(width)
    if slope > 0:
        return slope * width + math.log(-math.expm1(-slope * width)) - math.log(slope)
    return math.log(-math.expm1(slope * width)) - math.log(-slope)


def paper_closed_form(lam: float, scale: float) -> float:
    """001's ε(λ) for locations 0 vs 1 on [0, 1] (docs/methods.md §4)."""
    b = scale
    value = math.log(
        (math.exp((lam - 1) / b) - math.exp(-lam / b)) / ((1 - math.exp(-1 / b)) * (2 * lam - 1))
    )
    return value / (lam - 1)
