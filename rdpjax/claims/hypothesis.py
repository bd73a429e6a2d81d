"""The hypothesis-testing view of a claim: its trade-off function f(a) and hockey-stick curve δ(ε).

A test of "x" against "x'" that rejects on a set S of outputs has type I error ``a = Q(S)``
and type II error ``b = 1 − P(S)`` (P, Q: the output laws on x and x'). A claim bounds every
such test's errors from below, ``b ≥ f(a)`` (Dong, Roth, Su, "Gaussian differential privacy",
arXiv:1905.02383v3, Def. 2.1–2.3), or equivalently bounds the hockey-stick divergence
``sup_S P(S) − e^ε Q(S) ≤ δ(ε)`` at every ε ≥ 0 (the primal–dual view, ibid. Prop. 2.12). A set
whose certified masses break either inequality refutes the claim (:mod:`rdpjax.rejection`).

Closed forms, for the claims that have them:

* ε-DP and (ε, δ)-DP: ``f(a) = max(0, 1 − δ − e^ε a, e^{−ε}(1 − δ − a))`` (ibid. eq. (6));
  the worst pair is Kairouz, Oh, Viswanath's four-point law (arXiv:1311.0776v4, Thm 2.1), whose
  hockey-stick curve is ``δ + (1 − δ)(e^{ε₀} − e^ε)₊ / (1 + e^{ε₀})``.
* μ-GDP: ``G_μ(a) = Φ(Φ⁻¹(1 − a) − μ)`` (ibid. eq. (4)) and
  ``δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (ibid. Cor. 2.13).

zCDP, RDP-curve and dp_accounting claims have no closed-form trade-off function here; they are
checked by Rényi bounds. Host float64, elementwise, O(size of the input).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rdpjax.claims._claim import Claim

__all__ = ["SET_KINDS", "hockey_stick", "max_power", "tradeoff"]

SET_KINDS = ("pure_dp", "approx_dp", "gdp")
"""Claim kinds with a trade-off function, which rejection sets can check."""


def _set_claim(claim: Any) -> Claim:
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be a Claim; got {claim!r}")
    if claim.kind not in SET_KINDS:
        raise ValueError(
            f"a {claim.kind} claim ({claim}) has no closed-form trade-off function; claims "
            f"of kind {', '.join(SET_KINDS)} do (zCDP and RDP claims are checked by Rényi bounds)"
        )
    return claim


def _eps_delta(claim: Claim) -> tuple[float, float]:
    return float(claim.params["epsilon"]), float(claim.params.get("delta", 0.0))


def tradeoff(claim: Any, a: Any) -> np.ndarray:
    """The smallest type II error ``f(a)`` the claim allows a test of type I error ``a``.

    Args:
        claim: a :class:`~rdpjax.claims.Claim` of kind ``pure_dp``, ``approx_dp`` or ``gdp``.
        a: type I error(s) in [0, 1].

    Returns:
        float64 array of ``f(a)`` (shape of ``a``), convex, non-increasing, ``f(a) ≤ 1 − a``.

    Raises:
        ValueError: for another kind of claim, or ``a`` outside [0, 1] or NaN.

    Example:
        >>> from rdpjax.claims import gdp, tradeoff
        >>> round(float(tradeoff(gdp(1.0), 0.05)), 4)  # Φ(1.645 − 1)
        0.7405
    """
    from scipy import special  # here, not at import: `import rdpjax` leaves scipy unloaded

    claim = _set_claim(claim)
    a = np.asarray(a, np.float64)
    if np.any(np.isnan(a)) or np.any((a < 0.0) | (a > 1.0)):
        raise ValueError(f"type I errors must be in [0, 1]; got {a!r}")
    if claim.kind == "gdp":
        mu = float(claim.params["mu"])
        with np.errstate(divide="ignore"):  # ndtri(1) = inf, ndtri(0) = -inf: f = 0 and 1
            return special.ndtr(special.ndtri(1.0 - a) - mu)  # G_μ, DRS eq. (4)
    eps, delta = _eps_delta(claim)
    # DRS eq. (6): f_{ε,δ}(a) = max(0, 1 − δ − e^ε a, e^{−ε}(1 − δ − a)).
    steep, flat = 1.0 - delta - np.exp(eps) * a, np.exp(-eps) * (1.0 - delta - a)
    return np.maximum(0.0, np.maximum(steep, flat))


def max_power(claim: Any, a: Any) -> np.ndarray:
    """``1 − f(a)``: the largest ``P(S)`` the claim allows a set with ``Q(S) = a``.

    A set S with ``P(S) > 1 − f(Q(S))`` refutes the claim; since ``1 − f`` is non-decreasing,
    a lower bound on ``P(S)`` above ``1 − f`` at an upper bound on ``Q(S)`` does too.
    """
    return 1.0 - tradeoff(claim, a)


def hockey_stick(claim: Any, epsilon: Any) -> np.ndarray:
    """``δ(ε) = sup_S P(S) − e^ε Q(S)`` over the pairs the claim allows, at each ε ≥ 0.

    Args:
        claim: a :class:`~rdpjax.claims.Claim` of kind ``pure_dp``, ``approx_dp`` or ``gdp``.
        epsilon: ε(s) ≥ 0 (+inf allowed: δ = 0 there).

    Returns:
        float64 array of δ(ε) in [0, 1], non-increasing in ε.

    Raises:
        ValueError: for another kind of claim, or ε negative or NaN.

    Example:
        >>> from rdpjax.claims import approx_dp, hockey_stick
        >>> float(hockey_stick(approx_dp(1.0, 1e-5), 1.0))
        1e-05
    """
    from scipy import special  # here, not at import: `import rdpjax` leaves scipy unloaded

    claim = _set_claim(claim)
    e = np.asarray(epsilon, np.float64)
    if np.any(np.isnan(e)) or np.any(e < 0.0):
        raise ValueError(f"epsilon must be ≥ 0; got {epsilon!r}")
    if claim.kind == "gdp":
        mu = float(claim.params["mu"])
        if mu == 0.0:
            return np.zeros_like(e)
        with np.errstate(invalid="ignore", over="ignore"):
            first = special.ndtr(-e / mu + mu / 2.0)
            # e^ε Φ(−ε/μ − μ/2) in log space: no overflow of e^ε for large ε (DRS Cor. 2.13).
            second = np.exp(e + special.log_ndtr(-e / mu - mu / 2.0))
            out = np.where(np.isinf(e), 0.0, first - second)
        return np.clip(out, 0.0, 1.0)
    eps0, delta = _eps_delta(claim)
    with np.errstate(over="ignore"):
        # (e^{ε₀} − e^ε)₊ / (1 + e^{ε₀}) = (1 − e^{ε−ε₀})₊ / (1 + e^{−ε₀}), no overflow.
        gap = np.maximum(0.0, -np.expm1(e - eps0)) / (1.0 + np.exp(-eps0))
    return delta + (1.0 - delta) * gap
