"""Additive-noise mechanisms on the sum statistic: Laplace and Gaussian (paper 000, Sec. V).

``A(x) = S(x) + Y`` with ``S(x) = Σ_i x_i`` (000, "Additive Noise Mechanisms") and ``Y`` Laplace
of scale b or Gaussian of standard deviation b. A database of shape ``(m,)`` gives scalar outputs,
shape ``(n,)``; a database of shape ``(m, d)`` (rows in ``[0,1]^d``) gives the vector-valued sum
of the rows and outputs of shape ``(n, d)``, with i.i.d. noise in each coordinate.

Exact divergences (any pair, shift ``Δ = S(x) − S(x')``):
* Laplace: ``Σ_c D_λ(Lap(Δ_c, b) ‖ Lap(0, b))``, coordinates independent, each Mironov (2017,
  Prop. 6) = the closed form of 000 (docs/methods.md §3); ``D_∞ = ‖Δ‖₁ / b``.
* Gaussian: ``λ ‖Δ‖² / (2b²)``; ``D_∞ = ∞``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact, _random
from rdpjax.mechanisms.base import Mechanism, OutputSpec, continuous, pytree_dataclass
from rdpjax.mechanisms.checks import (
    as_database,
    check_lam,
    check_positive,
    host_database,
    param_value,
    scalar_param,
)
from rdpjax.mechanisms.databases import paper_pair

__all__ = ["AdditiveNoise", "Gaussian", "Laplace"]


class AdditiveNoise(Mechanism):
    """Shared part of :class:`Laplace` and :class:`Gaussian`; ``scale`` is a pytree leaf."""

    paper = "Kutta, Askin, Dunsche, arXiv:2212.04739, Sec. V"

    def __post_init__(self) -> None:
        check_positive("scale", self.scale)

    @staticmethod
    def statistic(database: jax.Array) -> jax.Array:
        """``S(x) = Σ_i x_i`` (rows summed for an ``(m, d)`` database)."""
        return jnp.sum(as_database(database), axis=0)

    def noise(self, key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        """Noise ``Y`` of the given shape (reparameterized: differentiable in ``scale``)."""
        raise NotImplementedError

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is a non-empty array of shape (m,) or (m, d)."""
        as_database(database)

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        """``S(x) + Y``: shape ``(n,)`` for ``(m,)`` databases, ``(n, d)`` for ``(m, d)``."""
        s = self.statistic(database)
        noise = self.noise(key, (n, *s.shape))  # the default float: an int or float32 sum joins it
        return jnp.asarray(s, noise.dtype)[None] + noise

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Continuous, of dimension d for an ``(m, d)`` database and 1 otherwise (or for none)."""
        if database is None:
            return continuous(1)
        x = as_database(database)
        return continuous(1 if x.ndim == 1 else int(x.shape[1]))

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Pair (21) of 000: ``x = (1, 0, …, 0)``, ``x' = 0``, m = 10."""
        return paper_pair()

    def _shift(self, x: Any, x_prime: Any) -> np.ndarray:
        a, b = host_database(x), host_database(x_prime)
        if a.shape[1:] != b.shape[1:]:
            raise ValueError(f"x and x_prime have incompatible shapes {a.shape}, {b.shape}")
        return np.atleast_1d(a.sum(axis=0) - b.sum(axis=0))

    def divergence_of_shift(self, lam: float, shift: np.ndarray) -> float:
        """``D_λ(law(Δ + Y) ‖ law(Y))`` for a shift vector Δ (one entry per coordinate)."""
        raise NotImplementedError


@pytree_dataclass
class Laplace(AdditiveNoise):
    """Laplace mechanism ``Σ x_i + Lap(0, b)`` (000, Sec. V; b = 5 in the paper).

    Args:
        scale: the Laplace scale b > 0 (a pytree leaf).

    ``epsilon = 1/b``: ε-DP for entries in [0, 1] (ℓ1 sensitivity 1; for rows in ``[0,1]^d`` the
    level is ``d/b``).
    """

    scale: Any

    def noise(self, key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        """Laplace noise ``b · Lap(0, 1)`` of the given shape."""
        return jnp.asarray(self.scale) * _random.laplace(key, shape)

    def divergence_of_shift(self, lam: float, shift: np.ndarray) -> float:
        """``Σ_c D_λ(Lap(Δ_c, b) ‖ Lap(0, b))``: coordinates independent, each in closed form."""
        b = scalar_param("scale", self.scale)
        return float(sum(_exact.laplace_renyi(lam, d, b) for d in np.atleast_1d(shift)))

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ``; the closed form of 000 (Mironov 2017, Prop. 6) per coordinate."""
        lam = check_lam(lam)
        return self.divergence_of_shift(lam, self._shift(x, x_prime))

    @property
    def epsilon(self) -> float | None:
        """``1/b``, the ε-DP level for entries in [0, 1] (``None`` when b is traced)."""
        b = param_value(self.scale)
        return None if b is None else 1.0 / b


@pytree_dataclass
class Gaussian(AdditiveNoise):
    """Gaussian mechanism ``Σ x_i + N(0, b²)`` (000, Sec. V; b = 5 in the paper).

    Args:
        scale: the noise standard deviation b > 0 (a pytree leaf).

    No pure ε-DP level (``epsilon`` is ``None``): the density ratio is unbounded. Its ``claim``
    is ρ-zCDP with ρ = 1/(2b²).
    """

    scale: Any

    def noise(self, key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        """Gaussian noise ``b · N(0, 1)`` of the given shape."""
        return jnp.asarray(self.scale) * _random.normal(key, shape)

    def divergence_of_shift(self, lam: float, shift: np.ndarray) -> float:
        """``λ ‖Δ‖² / (2b²)`` for the shift vector Δ."""
        b = scalar_param("scale", self.scale)
        return _exact.gaussian_renyi(lam, float(np.sum(np.square(shift))), b)

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ = λ ‖Δ‖² / (2b²)`` (000, Sec. V)."""
        lam = check_lam(lam)
        return self.divergence_of_shift(lam, self._shift(x, x_prime))

    @property
    def claim(self) -> Any:
        """``zcdp(1/(2b²))``: ε(λ) ≤ λ/(2b²) for databases with scalar entries in [0, 1].

        Changing one entry moves the sum by |Δ| ≤ 1, and ``D_λ(N(Δ, b²) ‖ N(0, b²)) = λΔ²/(2b²)``
        (Bun & Steinke, arXiv:1605.02065v1, Lemma 2.4 and Prop. 1.6), so the claim is exact on
        the reference pair. Assumes scalar entries (databases of shape ``(m,)``): for rows in
        ``[0,1]^d`` the sum's ℓ2 sensitivity is √d and the tight claim is ``zcdp(d/(2b²))``,
        which this property cannot see. ``None`` when the scale is traced or batched.
        """
        b = param_value(self.scale)
        if b is None or np.ndim(b) != 0:
            return None
        from rdpjax.claims import zcdp  # lazy: claims must not import the zoo

        return zcdp(1.0 / (2.0 * b * b))  # Bun & Steinke, Prop. 1.6 with Δ = 1
