"""Locally private density estimation on [0, 1] (003, Sec. 4): the histogram and the series.

Duchi, Jordan, Wainwright, arXiv:1305.6000, Theorem 2: over Sobolev classes of smoothness β the
α-LDP minimax risk is ``≳ (nα²)^(−2β/(2β+2))``. Two estimators attain it (docs/methods.md §5): the
private histogram (Proposition 2, :func:`histogram_density`, :class:`HistogramDensity`) and the
orthogonal-series estimator (22) with the trigonometric basis (Proposition 3,
:func:`series_density`, :class:`SeriesDensity`); :func:`histogram_bins` and :func:`series_terms`
follow the propositions' rates. The fitted densities are pytrees with ``f̂(x)`` and the exact
``∫(f̂ − f)²`` given the true bin masses or coefficients. O(n · k) per replication.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._pytree import pytree_dataclass
from rdpjax._validation import check_int
from rdpjax.ldp.checks import check_outputs, concrete
from rdpjax.ldp.simplex import maybe_project
from rdpjax.mechanisms.series import trigonometric_basis


def _check_rate_args(n: Any, alpha: Any) -> tuple[int, float]:
    n = check_int(n, "n", 1)
    value = concrete(alpha)
    if value is None or value.shape != () or not (np.isfinite(value) and value > 0):
        raise ValueError(f"alpha must be a concrete finite number > 0; got {alpha!r}")
    return n, float(value)


def histogram_bins(n: int, alpha: Any) -> int:
    """The bin count of Proposition 2, k = round((nα²)^{1/4}), at least 2 (constant 1 [choice]).

    Raises:
        ValueError: for n < 1 or α not a concrete number > 0.
    """
    n, alpha = _check_rate_args(n, alpha)
    return max(2, round((n * alpha**2) ** 0.25))


def series_terms(n: int, alpha: Any, beta: float = 1.0) -> int:
    """The number of terms of Proposition 3, k = round((nα²)^{1/(2β+2)}), at least 1.

    The propositions' constants are unverified (docs/methods.md §5); this uses 1 [choice].

    Raises:
        ValueError: for n < 1, α not a concrete number > 0, or β < 1.
    """
    n, alpha = _check_rate_args(n, alpha)
    if not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta >= 1):
        raise ValueError(f"beta (the smoothness) must be a finite number >= 1; got {beta!r}")
    return max(1, round((n * alpha**2) ** (1.0 / (2.0 * beta + 2.0))))


@pytree_dataclass()
class HistogramDensity:
    """``f̂ = Σ_j θ̂_j 1{bin j}`` on k equal bins of [0, 1] (003, Sec. 4, Proposition 2), a pytree.

    Attributes:
        heights: θ̂, shape ``(..., k)``; in kΔ_k after projection, so ``f̂ ≥ 0`` and ``∫ f̂ = 1``.
    """

    heights: jax.Array

    @property
    def bins(self) -> int:
        """The number of bins k (the last axis of ``heights``)."""
        return self.heights.shape[-1]

    def __call__(self, x: Any) -> jax.Array:
        """``f̂(x)`` for points x of [0, 1] (x = 1 in the last bin), shape ``(..., *x.shape)``."""
        x = jnp.asarray(x)
        index = jnp.clip(jnp.floor(x * self.bins), 0, self.bins - 1).astype(jnp.int32)
        return jnp.take(self.heights, index, axis=-1)

    def squared_error(self, bin_masses: Any, norm_sq: Any) -> jax.Array:
        """``∫(f̂ − f)²`` for a density f with bin masses ``F_j = ∫_{bin j} f``, ``∫f² = norm_sq``.

        Computed as ``Σ_j (θ̂_j − kF_j)²/k + (∫f² − kΣ_j F_j²)``: the estimation error plus the
        within-bin variance of f (the squared bias of the best histogram), without cancellation.
        """
        target = self.bins * jnp.asarray(bin_masses)
        bias_sq = norm_sq - jnp.sum(target**2) / self.bins
        heights = jnp.asarray(self.heights)
        target = target.reshape((1,) * (heights.ndim - target.ndim) + target.shape)
        return jnp.sum((heights - target) ** 2, -1) / self.bins + bias_sq


@pytree_dataclass()
class SeriesDensity:
    """``f̂ = Σ_{j≤k} θ̂_j φ_j``, trigonometric basis (003, eq. (22)), a pytree.

    Attributes:
        coefficients: θ̂, shape ``(..., k)`` (θ̂_1 estimates ∫f = 1).
    """

    coefficients: jax.Array

    @property
    def terms(self) -> int:
        """The number of basis terms k (the last axis of ``coefficients``)."""
        return self.coefficients.shape[-1]

    def __call__(self, x: Any) -> jax.Array:
        """``f̂(x)``, shape ``(..., *x.shape)``; not clipped, so it may dip below zero."""
        phi = trigonometric_basis(jnp.asarray(x)[..., None], self.terms)  # (*x.shape, k)
        return jnp.tensordot(self.coefficients, jnp.moveaxis(phi, -1, 0), axes=1)

    def squared_error(self, coefficients: Any, norm_sq: Any) -> jax.Array:
        """``∫(f̂ − f)² = Σ_{j≤k}(θ̂_j − θ_j)² + Σ_{j>k} θ_j²`` (Parseval).

        Args:
            coefficients: the true ``θ_j = ∫ f φ_j``, j = 1..k, shape ``(k,)``.
            norm_sq: ``∫ f² = Σ_j θ_j²``; the tail is ``norm_sq − Σ_{j≤k} θ_j²``.
        """
        theta = jnp.asarray(coefficients)
        tail = norm_sq - jnp.sum(theta**2)
        coefficients = jnp.asarray(self.coefficients)
        theta = theta.reshape((1,) * (coefficients.ndim - theta.ndim) + theta.shape)
        return jnp.sum((coefficients - theta) ** 2, -1) + tail


def histogram_density(z: Any, *, project: bool = True) -> HistogramDensity:
    """The private histogram: ``θ̂ = Π_k((k/n) Σ_i Z_i)`` (003, Sec. 4; Proposition 2).

    Args:
        z: outputs ``Z_i = e_k(X_i) + W_i`` of the zoo's ``LaplaceHistogram(alpha, bins=k)``,
            shape ``(..., n, k)``. Un-noised ``e_k(X_i)`` give the classical histogram.
        project: project onto kΔ_k (default; 003's estimator) or keep the unbiased heights.

    Returns:
        A :class:`HistogramDensity`.
    """
    z = check_outputs("z", z, min_ndim=2)
    if not jnp.issubdtype(z.dtype, jnp.floating):
        z = z.astype(float)
    k = z.shape[-1]
    heights = k * jnp.mean(z, axis=-2)  # E = k F_j, F_j the mass of bin j
    return HistogramDensity(maybe_project(heights, project, total=float(k)))  # Π_k


def series_density(z: Any) -> SeriesDensity:
    """Estimator (22) of 003: ``θ̂_j = (1/n) Σ_i Z_ij``.

    Args:
        z: privatized vectors in ``{−B, B}^k`` (``OrthogonalSeries.values(bits)``), or any
            vectors with ``E[Z | X] = (φ_1(X), …, φ_k(X))`` (e.g. the un-noised ``φ(X_i)`` for the
            classical series estimator), shape ``(..., n, k)``.

    Returns:
        A :class:`SeriesDensity`.
    """
    z = check_outputs("z", z, min_ndim=2)
    if not jnp.issubdtype(z.dtype, jnp.floating):
        z = z.astype(float)
    return SeriesDensity(jnp.mean(z, axis=-2))
