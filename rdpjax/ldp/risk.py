"""Exact risks of paper 003's estimators before projection (host, float64) [derived].

Duchi, Jordan, Wainwright, *Local Privacy and Minimax Bounds: Sharp Rates for Probability
Estimation*, arXiv:1305.6000, prove rates (Theorems 1 and 2, Propositions 2 and 3) up to constants
that the text does not give; the risks here are exact for the *unprojected* estimators, derived in
docs/methods.md §5 and checked against Monte Carlo and enumeration in
``tests/ldp/test_ldp_risk.py``.
The projected estimators (Π_Δ, Π_k) have at most these risks, since the projection onto a convex
set that holds the truth is non-expansive toward it.

* :func:`multinomial_risk`: ``E‖θ̂ − θ‖²`` of the three multinomial estimators (Sec. 3) and of the
  non-private relative frequencies;
* :func:`histogram_risk`: ``E∫(f̂ − f)²`` of the private histogram (Sec. 4, Proposition 2) and of the
  classical one;
* :func:`series_risk`: ``E∫(f̂ − f)²`` of the orthogonal-series estimator (22) on outputs of sampler
  (20) (Proposition 3) and of the classical series estimator.

All are O(d) or O(k) on the host, plus k quadratures for the non-private series risk.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rdpjax._validation import check_int
from rdpjax.ldp.checks import check_alpha
from rdpjax.mechanisms import OrthogonalSeries
from rdpjax.mechanisms.series import trigonometric_basis

_CHANNELS = ("bitwise_rr", "laplace", "kary_rr", "none")


def multinomial_risk(theta: Any, alpha: Any, n: int, channel: str) -> np.ndarray:
    """Exact ``E‖θ̂ − θ‖²`` of the unprojected estimators (host, float64) [derived].

    The multinomial estimators of Duchi, Jordan, Wainwright, arXiv:1305.6000, Sec. 3, before Π_Δ
    (:mod:`rdpjax.ldp.multinomial`; the formulas are in docs/methods.md §5): bitwise randomized
    response ``coth²(α/4) Σ_j p_j(1 − p_j)/n``, Laplace ``(1 − ‖θ‖² + 8d/α²)/n``, k-ary randomized
    response ``((e^α + d − 1)/(e^α − 1))² Σ_j q_j(1 − q_j)/n``. O(d).

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
    check_alpha(alpha)
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


def _check_density_args(name: str, values: Any, norm_sq: Any, alpha: Any, n: Any):
    """The bin masses / coefficients as a float64 vector, ``∫f²`` finite, n ≥ 1, α > 0 or None."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be a non-empty finite 1-D array; got shape {values.shape}")
    try:
        finite = math.isfinite(float(norm_sq))
    except (TypeError, ValueError):
        finite = False
    if not finite:
        raise ValueError(f"norm_sq (∫ f²) must be a finite number; got {norm_sq!r}")
    if alpha is not None:
        check_alpha(alpha)
        if np.ndim(alpha) != 0:
            raise ValueError(f"alpha must be a scalar or None (no privacy); got {alpha!r}")
    return values, check_int(n, "n", 1)


def histogram_risk(bin_masses: Any, norm_sq: float, alpha: float | None, n: int) -> float:
    """Exact ``E∫(f̂ − f)²`` of the unprojected private histogram of 003, Sec. 4 [derived].

    The estimator of Proposition 2 of Duchi, Jordan, Wainwright, arXiv:1305.6000, before Π_k:
    ``f̂ = Σ_j θ̂_j 1{bin j}`` with ``θ̂ = (k/n) Σ_i Z_i`` and ``Z_i = e_k(X_i) + W_i``, W with i.i.d.
    Laplace entries of scale 2/α (the zoo's ``LaplaceHistogram(alpha, bins=k)``;
    :func:`rdpjax.ldp.histogram_density` with ``project=False``). With ``F_j = ∫_{bin j} f``,
    ``E θ̂_j = kF_j`` and ``Var θ̂_j = k²(F_j(1 − F_j) + 8/α²)/n``, so

    ``E∫(f̂ − f)² = (k/n) Σ_j (F_j(1 − F_j) + 8/α²) + (∫f² − kΣ_j F_j²)``,

    the variance plus the squared bias of the best histogram (the within-bin variance of f, as
    :meth:`rdpjax.ldp.HistogramDensity.squared_error` splits it). Without privacy the 8/α² is
    absent (the classical histogram). The projected estimator's risk is at most this: Π_k is
    non-expansive toward ``kF ∈ kΔ_k``. O(k).

    Args:
        bin_masses: ``F_j``, shape ``(k,)``, a pmf over the k equal bins of [0, 1].
        norm_sq: ``∫ f²``.
        alpha: the privacy level α > 0, or ``None`` for the non-private histogram.
        n: the sample size.

    Returns:
        The risk, a Python float.

    Raises:
        ValueError: for bin masses that are not a pmf, ``∫f² < kΣ_j F_j²`` (impossible by
            Cauchy–Schwarz), a non-finite ``norm_sq``, n < 1 or α not finite and > 0.
    """
    masses, n = _check_density_args("bin_masses", bin_masses, norm_sq, alpha, n)
    if np.any(masses < 0) or not math.isclose(masses.sum(), 1.0, abs_tol=1e-9):
        raise ValueError("bin_masses must be a pmf (non-negative, summing to 1)")
    k = masses.shape[-1]
    if norm_sq < k * np.sum(masses**2) * (1 - 1e-9):
        raise ValueError(
            f"norm_sq = {norm_sq!r} is below k Σ_j F_j² = {k * np.sum(masses**2)!r}, which no "
            "density with these bin masses has (Cauchy–Schwarz)"
        )
    noise = 0.0 if alpha is None else 8.0 / alpha**2  # Var Lap(2/α) = 8/α²
    variance = k / n * np.sum(masses * (1 - masses) + noise)
    return float(variance + norm_sq - k * np.sum(masses**2))


def series_risk(
    coefficients: Any,
    norm_sq: float,
    alpha: float | None,
    n: int,
    *,
    pdf: Callable[[float], float] | None = None,
) -> float:
    """Exact ``E∫(f̂ − f)²`` of estimator (22) of 003 with k trigonometric terms [derived].

    Estimator (22) of Duchi, Jordan, Wainwright, arXiv:1305.6000 (Sec. 4, Proposition 3):
    ``θ̂_j = (1/n) Σ_i Z_ij``, ``f̂ = Σ_{j≤k} θ̂_j φ_j``, with ``E[Z | X] = (φ_1(X), …, φ_k(X))``. By
    Parseval, with ``θ_j = ∫ f φ_j``,

    ``E∫(f̂ − f)² = Σ_{j≤k} (E Z_j² − θ_j²)/n + Σ_{j>k} θ_j²``,

    the tail being ``∫f² − Σ_{j≤k} θ_j²``.

    With privacy, Z is the output of sampler (20) with split ties (the zoo's
    ``OrthogonalSeries(alpha, k)``, unbiased for every k), which lies in ``{−B, B}^k``: ``E Z_j² =
    B²`` with ``B = B0 √k (e^α + 1)/(c_k (e^α − 1))``. Without privacy ``Z = φ(X)`` (the classical
    series estimator) and ``E Z_j² = ∫ f φ_j²``, computed by quadrature from ``pdf``
    (scipy ``quad``, k integrals). The published sampler with literal ties is biased for even k,
    and this is not its risk. O(k), plus the k quadratures without privacy.

    Args:
        coefficients: ``θ_1..θ_k``, shape ``(k,)`` (θ_1 = ∫f = 1 for a density).
        norm_sq: ``∫ f² = Σ_j θ_j²``.
        alpha: the privacy level α > 0, or ``None`` for the non-private estimator.
        n: the sample size.
        pdf: the density f on [0, 1], a scalar function; needed (only) when ``alpha`` is None.

    Returns:
        The risk, a Python float.

    Raises:
        ValueError: for a bad ``coefficients`` array, ``∫f² < Σ_{j≤k} θ_j²`` (impossible by
            Bessel's inequality), a non-finite ``norm_sq``, n < 1, α not finite and > 0, or
            ``alpha=None`` without ``pdf``.
    """
    theta, n = _check_density_args("coefficients", coefficients, norm_sq, alpha, n)
    if norm_sq < np.sum(theta**2) * (1 - 1e-9):
        raise ValueError(
            f"norm_sq = {norm_sq!r} is below Σ_j θ_j² = {np.sum(theta**2)!r}, which no density "
            "with these coefficients has (Bessel's inequality)"
        )
    k = theta.shape[-1]
    if alpha is None:
        if pdf is None:
            raise ValueError("without privacy (alpha=None) pass pdf=, for E φ_j(X)² = ∫ f φ_j²")
        from scipy.integrate import quad

        second = [
            quad(
                lambda t, j=j: pdf(t) * float(trigonometric_basis(t, k, xp=np)[j]) ** 2,
                0,
                1,
                limit=400,
            )[0]
            for j in range(k)
        ]
    else:
        second = [float(OrthogonalSeries(alpha, k).bound) ** 2] * k  # Z ∈ {−B, B}^k
    return float(np.sum(np.asarray(second) - theta**2) / n + norm_sq - np.sum(theta**2))
