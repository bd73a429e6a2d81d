"""Claims from closed-form privacy guarantees: ε-DP, ρ-zCDP, μ-GDP, and RDP curves or tables.

Each constructor validates its parameters before anything is evaluated and returns a
:class:`~rdpjax.claims.Claim`; the implication it encodes is cited in its docstring and in
:mod:`rdpjax.claims`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rdpjax._json import json_floats
from rdpjax.claims._claim import Claim, _nonnegative, _orders_array, _real
from rdpjax.claims._kernels import _call_curve

__all__ = ["approx_dp", "gdp", "pure_dp", "rdp", "zcdp"]


def pure_dp(epsilon: float, delta: float = 0.0) -> Claim:
    """An ε-DP claim: ε(λ) ≤ D_λ(RR_ε), the RDP curve of binary randomized response at ε.

    Every ε-DP pair of output laws is a post-processing of ``Bern(p), Bern(1−p)`` with
    ``p = e^ε/(1+e^ε)`` (Kairouz, Oh, Viswanath, arXiv:1311.0776v4, Thm 2.1: the privacy region
    of ε-DP is RR_ε's), so by data processing ``D_λ ≤ 1/(λ−1) log(p^λ(1−p)^{1−λ} +
    (1−p)^λ p^{1−λ})``, and RR_ε attains it: no tighter curve follows from ε-DP. It lies below
    ``min(ε, λε²/2)`` (Bun & Steinke, arXiv:1605.02065v1, Prop. 3.3) and rises to ε as λ → ∞.

    Args:
        epsilon: ε, finite and ≥ 0.
        delta: must be 0; for δ > 0 use :func:`approx_dp` (an (ε, δ) claim implies no finite
            ε(λ) at any order, so it is checked by rejection sets instead of Rényi bounds).

    Returns:
        A :class:`Claim` of kind ``"pure_dp"``.

    Raises:
        ValueError: for ε negative, infinite or NaN, or δ ≠ 0.

    Example:
        >>> from rdpjax.claims import pure_dp
        >>> float(pure_dp(1.0)(2.0)) < 1.0
        True
    """
    epsilon = _nonnegative(epsilon, "epsilon")
    d = _real(delta, "delta")
    if d > 0.0:
        raise ValueError(
            f"delta = {delta!r} > 0: pure_dp is ε-DP (δ = 0); for an (ε, δ)-DP claim use "
            "approx_dp(epsilon, delta), which is checked by certified rejection sets"
        )
    if d != 0.0:  # negative or NaN
        raise ValueError(f"delta must be 0 (pure ε-DP); got {delta!r}")
    return Claim(name=f"ε-DP, ε = {epsilon:g}", kind="pure_dp", params={"epsilon": epsilon})


def approx_dp(epsilon: float, delta: float) -> Claim:
    """An (ε, δ)-DP claim: ``P(S) ≤ e^ε Q(S) + δ`` for every set S, both ways round.

    With δ = 0 this is ε-DP, and the claim returned is :func:`pure_dp` (ε) itself: one
    statement, one claim, so every route (:func:`rdpjax.claims.check`, the audit's choice of
    test, its report and the command line's ``--claim-epsilon E --claim-delta 0``) treats the
    two spellings alike, and both get the ε-DP Rényi curve (issue 51, item 3).

    With δ > 0 the privacy loss may be unbounded with probability δ, so the claim implies no
    finite ε(λ) at any order (its curve is +inf) and Rényi bounds cannot refute it. It is
    checked by :func:`rdpjax.rejection.set_test`: a rejection set whose certified masses break
    the inequality refutes it. Its trade-off function is
    ``f(a) = max(0, 1 − δ − e^ε a, e^{−ε}(1 − δ − a))`` (Dong, Roth, Su, arXiv:1905.02383v3,
    eq. (6)), the privacy region of Kairouz, Oh, Viswanath (arXiv:1311.0776v4, Thm 2.1).

    Args:
        epsilon: ε, finite and ≥ 0.
        delta: δ in [0, 1); 0 gives ``pure_dp(epsilon)``.

    Returns:
        A :class:`Claim` of kind ``"approx_dp"`` (δ > 0) or ``"pure_dp"`` (δ = 0).

    Raises:
        ValueError: for ε negative, infinite or NaN; δ outside [0, 1) or NaN.

    Example:
        >>> from rdpjax.claims import approx_dp, pure_dp
        >>> c = approx_dp(1.0, 1e-5)
        >>> c.kind, float(c(2.0)[0])
        ('approx_dp', inf)
        >>> approx_dp(1.0, 0.0) == pure_dp(1.0)
        True
    """
    epsilon = _nonnegative(epsilon, "epsilon")
    d = _real(delta, "delta")
    if not 0.0 <= d < 1.0:
        raise ValueError(f"delta must be in [0, 1); got {delta!r}")
    if d == 0.0:
        return pure_dp(epsilon)
    return Claim(
        name=f"(ε, δ)-DP, ε = {epsilon:g}, δ = {d:g}",
        kind="approx_dp",
        params={"epsilon": epsilon, "delta": d},
    )


def zcdp(rho: float) -> Claim:
    """A ρ-zCDP claim: ε(λ) ≤ ρλ for every λ > 1 (Bun & Steinke, arXiv:1605.02065v1, Def. 1.1).

    Args:
        rho: ρ, finite and ≥ 0.

    Returns:
        A :class:`Claim` of kind ``"zcdp"`` (+inf at λ = ∞ when ρ > 0).

    Raises:
        ValueError: for ρ negative, infinite or NaN.
    """
    rho = _nonnegative(rho, "rho")
    return Claim(name=f"ρ-zCDP, ρ = {rho:g}", kind="zcdp", params={"rho": rho})


def gdp(mu: float) -> Claim:
    """A μ-GDP claim: ε(λ) ≤ λμ²/2.

    A μ-GDP pair of output laws is a post-processing of ``N(0,1), N(μ,1)`` (Dong, Roth, Su,
    "Gaussian differential privacy", arXiv:1905.02383v3, Def. 2.6 with Blackwell's theorem,
    Thm 2.10), and ``D_λ(N(0,1) ‖ N(μ,1)) = λμ²/2`` (Bun & Steinke, arXiv:1605.02065v1,
    Lemma 2.4); by data processing μ-GDP is (μ²/2)-zCDP.

    Args:
        mu: μ, finite and ≥ 0.

    Returns:
        A :class:`Claim` of kind ``"gdp"``.

    Raises:
        ValueError: for μ negative, infinite or NaN.
    """
    mu = _nonnegative(mu, "mu")
    return Claim(name=f"μ-GDP, μ = {mu:g}", kind="gdp", params={"mu": mu})


def _tabulated(orders: Any, values: Any, name: str | None) -> Claim:
    lam = _orders_array(orders, "orders")
    if lam.ndim != 1 or lam.size == 0:
        raise ValueError(f"orders must be a non-empty 1-D sequence; got shape {lam.shape}")
    if not np.all(np.isfinite(lam)):
        raise ValueError(f"orders must be finite (> 1); got {lam[~np.isfinite(lam)][0]!r}")
    try:
        eps = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"values must be real numbers ≥ 0; got {values!r}") from None
    if eps.shape != lam.shape:
        raise ValueError(
            f"orders and values must have the same length; got {lam.shape} and {eps.shape}"
        )
    bad = np.isnan(eps) | (eps < 0.0)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(f"values must be ≥ 0 and not NaN; got {eps[i]!r} at order {lam[i]:g}")
    order = np.argsort(lam, kind="stable")
    lam, eps = lam[order], eps[order]
    if np.any(np.diff(lam) == 0):
        raise ValueError(f"orders must not repeat; got {lam[:-1][np.diff(lam) == 0][0]:g} twice")
    if name is None:
        if lam.size <= 4:
            name = "RDP: " + ", ".join(f"ε({o:g}) ≤ {e:g}" for o, e in zip(lam, eps, strict=True))
        else:
            name = f"RDP curve at {lam.size} orders in [{lam[0]:g}, {lam[-1]:g}]"
    return Claim(
        name=name,
        kind="rdp",
        params={"orders": [float(o) for o in lam], "values": json_floats(eps)},
        orders=tuple(float(o) for o in lam),
    )


def rdp(curve: Any, orders: Any = None, *, name: str | None = None) -> Claim:
    """An RDP claim: a curve λ ↦ ε(λ) defined for every λ > 1, or values at finitely many orders.

    A tabulated claim ``ε(λ_i) ≤ v_i`` implies ``ε(λ) ≤ min_{λ_i ≥ λ} v_i`` at every λ, because
    D_λ is non-decreasing in λ (van Erven & Harremoës, "Rényi divergence and Kullback-Leibler
    divergence", arXiv:1206.2459v2, Thm 3); at a tabulated order this is its value when the
    table is non-decreasing (tighter otherwise), and above the largest order nothing is implied
    (+inf).

    Args:
        curve: one of
            * a callable ``λ ↦ ε(λ)`` (vectorized over a float64 array, or scalar: it is then
              called order by order); with ``orders`` it is tabulated at those orders;
            * a mapping ``{λ: ε}``;
            * a pair of sequences ``(orders, values)``;
            * a sequence of values, with ``orders`` given.
        orders: the orders for a sequence of values or to tabulate a callable at; finite, > 1,
            no repeats.
        name: label (default: a description of the curve).

    Returns:
        A :class:`Claim` of kind ``"rdp"``; ``orders`` is ``None`` for an untabulated callable.

    Raises:
        ValueError: for orders ≤ 1, infinite or repeated; values negative or NaN (inf is
            allowed: nothing claimed there); lengths that differ; a callable that returns a
            negative or NaN value at an order it is evaluated at (the error names the order).

    Example:
        >>> from rdpjax.claims import rdp
        >>> rdp({2: 0.5, 8: 0.7})([1.5, 4.0, 9.0]).tolist()
        [0.5, 0.7, inf]
    """
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a string or None; got {name!r}")
    if callable(curve):
        if orders is not None:
            lam = _orders_array(orders, "orders")
            return _tabulated(lam, _call_curve(curve, lam.ravel()).reshape(lam.shape), name)
        label = getattr(curve, "__qualname__", None) or type(curve).__name__
        return Claim(
            name=name or f"RDP curve {label}",
            kind="rdp",
            params={"curve": label},
            _source=curve,
        )
    if isinstance(curve, Mapping):
        if orders is not None:
            raise ValueError("orders must be None when curve is a mapping {λ: ε}")
        return _tabulated(list(curve.keys()), list(curve.values()), name)
    if isinstance(curve, (str, bytes)) or not isinstance(curve, (Sequence, np.ndarray)):
        raise ValueError(
            "curve must be a callable λ ↦ ε(λ), a mapping {λ: ε}, a pair (orders, values) or "
            f"values with orders=; got {curve!r}"
        )
    if orders is not None:
        return _tabulated(orders, curve, name)
    if len(curve) == 2 and all(np.ndim(part) == 1 for part in curve):
        return _tabulated(curve[0], curve[1], name)
    raise ValueError(
        "curve: a sequence is read as a pair (orders, values) of 1-D sequences, or as values "
        f"when orders= is given; got {curve!r} without orders"
    )
