"""Locally private estimation of paper 003: the minimax-optimal estimators and their exact risks.

Duchi, Jordan, Wainwright, *Local Privacy and Minimax Bounds: Sharp Rates for Probability
Estimation* (arXiv:1305.6000); formulas restated and checked in docs/methods.md §5. α is the local
privacy level (α-LDP), not a confidence level. The channels are the zoo's
(:mod:`rdpjax.mechanisms.local`, :mod:`rdpjax.mechanisms.series`); this module is the
statistician's side: it debiases the privatized outputs ``Z_1..Z_n`` and projects the result back
onto the set of valid parameters.

* Multinomial θ ∈ Δ_d (Theorem 1: risk ≍ d/(nα²), effective sample size n ↦ nα²/d):
  :func:`multinomial_bitwise_rr` (003's randomized response), :func:`multinomial_laplace`
  (one-hot plus Laplace noise), :func:`multinomial_kary_rr` (Warner's k-ary randomized response),
  each optionally followed by :func:`project_simplex`; :func:`multinomial_risk` gives the exact
  mean squared error of the unprojected estimators.
* Densities on [0, 1] (Theorem 2: risk ≳ (nα²)^(−2β/(2β+2))): the private histogram
  (Proposition 2, :func:`histogram_density`, :func:`private_histogram`) and the orthogonal-series
  estimator (22) with the trigonometric basis (Proposition 3, :func:`series_density`,
  :func:`private_series`); bins and terms follow the propositions' rates by default
  (:func:`histogram_bins`, :func:`series_terms`).

Everything is pure and jittable (``n``, ``d``, ``k`` are static shapes) and batched over leading
axes, so replications are one ``vmap``. Concrete inputs are validated eagerly; under ``jit`` only
shapes are checked.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._pytree import pytree_dataclass
from rdpjax._validation import check_int
from rdpjax.mechanisms import (
    KaryRandomizedResponse,
    LaplaceHistogram,
    OneHotRandomizedResponse,
    OrthogonalSeries,
)
from rdpjax.mechanisms.base import Mechanism
from rdpjax.mechanisms.series import trigonometric_basis

__all__ = [
    "HistogramDensity",
    "SeriesDensity",
    "histogram_bins",
    "histogram_density",
    "multinomial_bitwise_rr",
    "multinomial_kary_rr",
    "multinomial_laplace",
    "multinomial_risk",
    "private_histogram",
    "private_series",
    "privatize",
    "project_simplex",
    "series_density",
    "series_terms",
]

_CHANNELS = ("bitwise_rr", "laplace", "kary_rr", "none")


# --------------------------------------------------------------------------------------------
# Validation (concrete values only; tracers pass through).


def _concrete(value: Any) -> np.ndarray | None:
    if isinstance(value, jax.core.Tracer):
        return None
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _check_alpha(alpha: Any) -> jax.Array:
    """α > 0 and finite (α = 0 makes every debiasing factor infinite)."""
    value = _concrete(alpha)
    if value is not None and not np.all(np.isfinite(value) & (value > 0)):
        raise ValueError(f"alpha (the privacy level α) must be finite and > 0; got {alpha!r}")
    return jnp.asarray(alpha)


def _check_outputs(name: str, z: Any, *, min_ndim: int, values: str = "finite") -> jax.Array:
    """Privatized outputs: rank ≥ ``min_ndim``, non-empty, finite / binary when concrete."""
    arr = jnp.asarray(z)
    if arr.ndim < min_ndim or arr.size == 0:
        shape = "(..., n, d)" if min_ndim == 2 else "(..., n)"
        raise ValueError(f"{name} must be a non-empty array of shape {shape}; got {arr.shape}")
    host = _concrete(arr)
    if host is not None:
        if values == "binary" and not np.all((host == 0) | (host == 1)):
            raise ValueError(f"{name} must hold bits in {{0, 1}}")
        if not np.all(np.isfinite(host)):
            raise ValueError(f"{name} must be finite")
    return arr


def _check_rate_args(n: Any, alpha: Any) -> tuple[int, float]:
    n = check_int(n, "n", 1)
    value = _concrete(alpha)
    if value is None or value.shape != () or not (np.isfinite(value) and value > 0):
        raise ValueError(f"alpha must be a concrete finite number > 0; got {alpha!r}")
    return n, float(value)


# --------------------------------------------------------------------------------------------
# Projection onto the (scaled) simplex.


def project_simplex(v: Any, total: Any = 1.0) -> jax.Array:
    """Euclidean projection onto ``total · Δ_k = {w ≥ 0, Σ w = total}``, along the last axis.

    Exact, sort-based: with ``u`` the entries sorted in decreasing order,
    ``ρ = max{j : u_j − (Σ_{r≤j} u_r − total)/j > 0}``, ``θ = (Σ_{r≤ρ} u_r − total)/ρ`` and
    ``w = max(v − θ, 0)`` (Held, Wolfe, Crowder 1974; Duchi, Shalev-Shwartz, Singer, Chandra,
    ICML 2008, Fig. 1). 003 uses it as Π_Δ (multinomial, Sec. 3) and as
    ``Π_k(v) = k Π_Δ(v/k)``, the projection onto kΔ_k (private histogram, Sec. 4), which is
    ``project_simplex(v, total=k)``. Cost O(k log k) per vector; batched over leading axes.

    Args:
        v: array of shape ``(..., k)``, k ≥ 1.
        total: the simplex scale (> 0), a scalar or an array broadcasting to ``v.shape[:-1]``
            (a pytree leaf: it may be traced).

    Returns:
        The projection, shape and (floating) dtype of ``v``.

    Raises:
        ValueError: for a scalar or empty ``v``, a non-finite concrete ``v``, a concrete
            ``total`` that is not finite and > 0, or a ``total`` that does not broadcast.

    Example:
        >>> import rdpjax.ldp as ldp
        >>> [round(float(w), 6) for w in ldp.project_simplex([0.5, 0.8, -0.1])]
        [0.35, 0.65, 0.0]
    """
    v = jnp.asarray(v)
    if v.ndim < 1 or v.shape[-1] < 1:
        raise ValueError(f"v must have shape (..., k) with k >= 1; got {v.shape}")
    if not jnp.issubdtype(v.dtype, jnp.floating):
        v = v.astype(float)
    host = _concrete(v)
    if host is not None and not np.all(np.isfinite(host)):
        raise ValueError("v must be finite (the projection of a NaN or inf is undefined)")
    host_total = _concrete(total)
    if host_total is not None and not np.all(np.isfinite(host_total) & (host_total > 0)):
        raise ValueError(f"total must be finite and > 0; got {total!r}")
    total = jnp.asarray(total, dtype=v.dtype)
    try:
        total = jnp.broadcast_to(total, v.shape[:-1])
    except ValueError:
        raise ValueError(
            f"total of shape {total.shape} does not broadcast to v.shape[:-1] = {v.shape[:-1]}"
        ) from None
    return _project_simplex(v, total)


@jax.jit
def _project_simplex(v: jax.Array, total: jax.Array) -> jax.Array:
    k = v.shape[-1]
    u = -jnp.sort(-v, axis=-1)  # decreasing
    excess = jnp.cumsum(u, axis=-1) - total[..., None]
    j = jnp.arange(1, k + 1, dtype=v.dtype)
    # ρ = the largest j with u_j − excess_j / j > 0; j = 1 always qualifies since total > 0.
    rho = jnp.max(jnp.where(j * u > excess, jnp.arange(1, k + 1), 1), axis=-1, keepdims=True)
    theta = jnp.take_along_axis(excess, rho - 1, axis=-1) / rho.astype(v.dtype)
    return jnp.maximum(v - theta, 0.0)


def _maybe_project(theta: jax.Array, project: bool, total: Any = 1.0) -> jax.Array:
    return _project_simplex(theta, jnp.broadcast_to(total, theta.shape[:-1])) if project else theta


# --------------------------------------------------------------------------------------------
# Multinomial estimation (003, Sec. 3).


def multinomial_bitwise_rr(bits: Any, alpha: Any, *, project: bool = True) -> jax.Array:
    """θ̂ from 003's randomized response on one-hot vectors (zoo: ``OneHotRandomizedResponse``).

    Each bit of ``e_X ∈ {0,1}^d`` is kept with probability ``e^{α/2}/(1+e^{α/2})``, so
    ``E Z_j = θ_j (e^{α/2}−1)/(e^{α/2}+1) + 1/(1+e^{α/2})`` and the unbiased estimate is
    ``θ̂ = (Z̄ − 1/(1+e^{α/2})) (e^{α/2}+1)/(e^{α/2}−1)``, then ``Π_Δ`` (003, Sec. 3 "randomized
    response with minor modification"; docs/methods.md §5). Risk before projection:
    :func:`multinomial_risk` with ``channel="bitwise_rr"``.

    Args:
        bits: privatized outputs, shape ``(..., n, d)``, in {0, 1}.
        alpha: the privacy level α > 0 (scalar, or batched over the leading axes).
        project: project onto the simplex Δ_d (default) or return the unbiased estimate.

    Returns:
        θ̂ of shape ``(..., d)``.

    Raises:
        ValueError: for a bad shape, non-binary concrete bits, or α not finite and > 0.
    """
    bits = _check_outputs("bits", bits, min_ndim=2, values="binary")
    alpha = _check_alpha(alpha)[..., None]
    n = bits.shape[-2]
    mean = jnp.sum(bits.astype(jnp.int32), axis=-2) / n  # exact counts, then one division
    flip = jax.nn.sigmoid(-alpha / 2.0)  # 1/(1 + e^{α/2})
    theta = (mean - flip) / jnp.tanh(alpha / 4.0)  # (e^{α/2}+1)/(e^{α/2}−1) = coth(α/4)
    return _maybe_project(theta, project)


def multinomial_laplace(z: Any, *, project: bool = True) -> jax.Array:
    """θ̂ = Π_Δ(Z̄) from ``Z = e_X + W``, W with i.i.d. Laplace entries of scale 2/α (003, Sec. 3).

    The channel is the zoo's ``LaplaceHistogram(alpha, bins=d)`` run on the point ``(X + ½)/d``
    (bin X). ``Z̄`` is already unbiased, so α is not needed. Risk before projection
    ``(1 − ‖θ‖² + 8d/α²)/n`` (docs/methods.md §5).

    Args:
        z: privatized outputs, shape ``(..., n, d)``, finite.
        project: project onto Δ_d (default) or return the unbiased mean.

    Returns:
        θ̂ of shape ``(..., d)``.

    Raises:
        ValueError: for a bad shape or non-finite concrete outputs.
    """
    z = _check_outputs("z", z, min_ndim=2)
    if not jnp.issubdtype(z.dtype, jnp.floating):
        z = z.astype(float)
    return _maybe_project(jnp.mean(z, axis=-2), project)


def multinomial_kary_rr(codes: Any, alpha: Any, d: int, *, project: bool = True) -> jax.Array:
    """θ̂ from Warner's k-ary randomized response (the zoo's ``KaryRandomizedResponse``).

    ``P(Z = j) = q_j = (θ_j (e^α − 1) + 1)/(e^α + d − 1)``, so with the relative frequencies
    ``q̂`` the unbiased estimate is ``θ̂ = q̂ + (d q̂ − 1)/(e^α − 1)``, then ``Π_Δ``. Risk before
    projection ``((e^α + d − 1)/(e^α − 1))² Σ_j q_j(1 − q_j)/n`` [derived]: for small α it is of
    order d²/(nα²), a factor d above the minimax rate that the bitwise channel attains.

    Args:
        codes: privatized categories, integer array of shape ``(..., n)`` in ``[0, d)``.
        alpha: the privacy level α > 0 (scalar, or batched over the leading axes).
        d: the number of categories (static int ≥ 2).
        project: project onto Δ_d (default) or return the unbiased estimate.

    Returns:
        θ̂ of shape ``(..., d)``.

    Raises:
        ValueError: for a bad shape, non-integer codes, concrete codes outside ``[0, d)``, or α
            not finite and > 0.
    """
    d = check_int(d, "d", 2)
    codes = _check_outputs("codes", codes, min_ndim=1)
    if not jnp.issubdtype(codes.dtype, jnp.integer):
        raise ValueError(f"codes must be integers; got dtype {codes.dtype}")
    host = _concrete(codes)
    if host is not None and (host.min() < 0 or host.max() >= d):
        raise ValueError(f"codes must lie in [0, {d}); got values in [{host.min()}, {host.max()}]")
    alpha = _check_alpha(alpha)[..., None]
    n = codes.shape[-1]
    flat = codes.reshape(-1, n).astype(jnp.int32)
    counts = jax.vmap(lambda c: jnp.bincount(c, length=d))(flat)  # O(n + d) memory per row
    freq = counts.reshape(codes.shape[:-1] + (d,)) / n
    theta = freq + (d * freq - 1.0) / jnp.expm1(alpha)
    return _maybe_project(theta, project)


def multinomial_risk(theta: Any, alpha: Any, n: int, channel: str) -> np.ndarray:
    """Exact ``E‖θ̂ − θ‖²`` of the unprojected estimators (host, float64) [derived].

    Args:
        theta: the true pmf, shape ``(..., d)``.
        alpha: the privacy level α > 0 (ignored for ``channel="none"``).
        n: the sample size.
        channel: ``"bitwise_rr"``, ``"laplace"``, ``"kary_rr"``, or ``"none"`` (relative
            frequencies of the raw data, risk ``(1 − ‖θ‖²)/n``).

    Returns:
        The risk, shape ``theta.shape[:-1]``.

    Raises:
        ValueError: for an unknown channel, θ not a pmf, n < 1 or α not > 0.
    """
    if channel not in _CHANNELS:
        raise ValueError(f"channel must be one of {_CHANNELS}; got {channel!r}")
    n = check_int(n, "n", 1)
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim < 1 or np.any(theta < 0) or not np.allclose(theta.sum(-1), 1.0, atol=1e-9):
        raise ValueError("theta must be a pmf along its last axis")
    if channel == "none":
        return (1.0 - np.sum(theta**2, -1)) / n
    _check_alpha(alpha)
    alpha = np.asarray(alpha, dtype=np.float64)
    d = theta.shape[-1]
    if channel == "laplace":
        return (1.0 - np.sum(theta**2, -1) + 8.0 * d / alpha**2) / n  # Var Lap(2/α) = 8/α²
    if channel == "bitwise_rr":
        t = np.tanh(alpha / 4.0)[..., None]
        p = theta * t + 1.0 / (1.0 + np.exp(alpha / 2.0))[..., None]
        return np.sum(p * (1 - p), -1) / (n * t[..., 0] ** 2)
    e = np.expm1(alpha)[..., None]
    q = (theta * e + 1.0) / (e + d)
    return ((e[..., 0] + d) / e[..., 0]) ** 2 * np.sum(q * (1 - q), -1) / n


# --------------------------------------------------------------------------------------------
# Density estimation on [0, 1] (003, Sec. 4).


def histogram_bins(n: int, alpha: Any) -> int:
    """k = round((nα²)^{1/4}), at least 2: the bin count of Proposition 2 (constant 1 [choice]).

    Raises:
        ValueError: for n < 1 or α not a concrete number > 0.
    """
    n, alpha = _check_rate_args(n, alpha)
    return max(2, round((n * alpha**2) ** 0.25))


def series_terms(n: int, alpha: Any, beta: float = 1.0) -> int:
    """k = round((nα²)^{1/(2β+2)}), at least 1: the number of terms of Proposition 3.

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
        return jnp.sum((self.heights - target) ** 2, -1) / self.bins + bias_sq


@pytree_dataclass()
class SeriesDensity:
    """``f̂ = Σ_{j≤k} θ̂_j φ_j``, trigonometric basis (003, eq. (22)), a pytree.

    Attributes:
        coefficients: θ̂, shape ``(..., k)`` (θ̂_1 estimates ∫f = 1).
    """

    coefficients: jax.Array

    @property
    def terms(self) -> int:
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
        return jnp.sum((self.coefficients - theta) ** 2, -1) + tail


def histogram_density(z: Any, *, project: bool = True) -> HistogramDensity:
    """The private histogram: ``θ̂ = Π_k((k/n) Σ_i Z_i)`` (003, Sec. 4; Proposition 2).

    Args:
        z: outputs ``Z_i = e_k(X_i) + W_i`` of the zoo's ``LaplaceHistogram(alpha, bins=k)``,
            shape ``(..., n, k)``. Un-noised ``e_k(X_i)`` give the classical histogram.
        project: project onto kΔ_k (default; 003's estimator) or keep the unbiased heights.

    Returns:
        A :class:`HistogramDensity`.
    """
    z = _check_outputs("z", z, min_ndim=2)
    if not jnp.issubdtype(z.dtype, jnp.floating):
        z = z.astype(float)
    k = z.shape[-1]
    heights = k * jnp.mean(z, axis=-2)  # E = k F_j, F_j the mass of bin j
    return HistogramDensity(_maybe_project(heights, project, total=float(k)))  # Π_k


def series_density(z: Any) -> SeriesDensity:
    """Estimator (22) of 003: ``θ̂_j = (1/n) Σ_i Z_ij``.

    Args:
        z: privatized vectors in ``{−B, B}^k`` (``OrthogonalSeries.values(bits)``), or any
            vectors with ``E[Z | X] = (φ_1(X), …, φ_k(X))`` (e.g. the un-noised ``φ(X_i)`` for the
            classical series estimator), shape ``(..., n, k)``.

    Returns:
        A :class:`SeriesDensity`.
    """
    z = _check_outputs("z", z, min_ndim=2)
    if not jnp.issubdtype(z.dtype, jnp.floating):
        z = z.astype(float)
    return SeriesDensity(jnp.mean(z, axis=-2))


# --------------------------------------------------------------------------------------------
# End to end: privatize each individual's value, then estimate.


@jax.jit
def _privatize(key: jax.Array, mechanism: Mechanism, data: jax.Array) -> jax.Array:
    keys = jax.random.split(key, data.shape[0])
    return jax.vmap(lambda k_, x: mechanism.sample(k_, x, 1)[0])(keys, data)


def privatize(key: jax.Array, mechanism: Mechanism, data: Any) -> jax.Array:
    """``Z_i ~ Q(· | X_i)`` independently for each individual (non-interactive α-LDP).

    Args:
        key: PRNG key.
        mechanism: a zoo mechanism whose input ("database") is one individual's value, e.g.
            ``KaryRandomizedResponse``, ``OneHotRandomizedResponse`` (categories in [0, k)),
            ``LaplaceHistogram``, ``OrthogonalSeries`` (points of [0, 1]).
        data: the values ``X_1..X_n``, shape ``(n,)``.

    Returns:
        ``(n, ...)`` outputs: row i is one draw of ``mechanism.sample(·, X_i, 1)``.

    Raises:
        ValueError: for a non-mechanism, empty or non-1-D data, or concrete values outside the
            mechanism's input range.
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"mechanism must be a rdpjax mechanism; got {type(mechanism).__name__}")
    data = jnp.asarray(data)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"data must be a non-empty 1-D array of values; got shape {data.shape}")
    host = _concrete(data)
    if host is not None:
        if isinstance(mechanism, (KaryRandomizedResponse, OneHotRandomizedResponse)):
            if not np.all((host == np.round(host)) & (host >= 0) & (host < mechanism.k)):
                raise ValueError(f"data must be integer categories in [0, {mechanism.k})")
        elif isinstance(mechanism, (LaplaceHistogram, OrthogonalSeries)):
            if not np.all((host >= 0.0) & (host <= 1.0)):
                raise ValueError("data must be points of [0, 1]")
        elif not np.all(np.isfinite(host)):
            raise ValueError("data must be finite")
    return _privatize(key, mechanism, data)


def _check_points(data: Any) -> jax.Array:
    data = jnp.asarray(data)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"data must be a non-empty 1-D array of points; got shape {data.shape}")
    return data


def private_histogram(
    key: jax.Array, data: Any, alpha: Any, *, bins: int | None = None, project: bool = True
) -> HistogramDensity:
    """Privatize ``X_1..X_n ∈ [0, 1]`` with ``LaplaceHistogram`` and return the histogram.

    Args:
        key: PRNG key.
        data: shape ``(n,)``, points of [0, 1].
        alpha: privacy level α > 0.
        bins: number of bins; default :func:`histogram_bins` (Proposition 2: k ≍ (nα²)^{1/4}).
        project: as in :func:`histogram_density`.

    Returns:
        A :class:`HistogramDensity`.
    """
    data = _check_points(data)
    bins = histogram_bins(data.shape[0], alpha) if bins is None else bins
    z = privatize(key, LaplaceHistogram(alpha, check_int(bins, "bins", 2)), data)
    return histogram_density(z, project=project)


def private_series(
    key: jax.Array,
    data: Any,
    alpha: Any,
    *,
    beta: float = 1.0,
    terms: int | None = None,
    ties: str = "split",
) -> SeriesDensity:
    """Privatize ``X_1..X_n ∈ [0, 1]`` with sampler (20) and return estimator (22).

    Args:
        key: PRNG key.
        data: shape ``(n,)``, points of [0, 1].
        alpha: privacy level α > 0.
        beta: smoothness β ≥ 1 used by the default number of terms.
        terms: number k of basis functions (1..30, the sampler's limit); default
            :func:`series_terms` (Proposition 3: k ≍ (nα²)^{1/(2β+2)}).
        ties: ``"split"`` (default; α-LDP and unbiased for every k) or ``"literal"`` (003's
            published form: for even k neither α-LDP nor unbiased, docs/methods.md §5).

    Returns:
        A :class:`SeriesDensity`.

    Raises:
        ValueError: when the default rule asks for more than 30 terms (pass ``terms``).
    """
    data = _check_points(data)
    if terms is None:
        terms = series_terms(data.shape[0], alpha, beta)
        if terms > 30:
            raise ValueError(
                f"the rate of Proposition 3 asks for {terms} terms, above the sampler's 30; "
                "pass terms= explicitly"
            )
    mechanism = OrthogonalSeries(alpha, check_int(terms, "terms", 1), ties)
    return series_density(mechanism.values(privatize(key, mechanism, data)))
