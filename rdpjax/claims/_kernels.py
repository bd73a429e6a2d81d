"""Each kind of claim's ε(λ), evaluated at an array of orders λ in (1, inf].

Closed forms (binary randomized response for ε-DP, ``slope · λ`` for zCDP and GDP), the suffix
minimum of a table of RDP values, a user curve, or dp_accounting's RDP accountant (an optional
dependency, imported lazily). Host float64; O(L) for L orders, plus one accountant composition.
The citations for why each curve is the one its claim implies are in :mod:`rdpjax.claims`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_DP_ACCOUNTING_HINT = "from_dp_accounting needs dp_accounting: pip install dp-accounting"


# --------------------------------------------------------------------------------------------
# The curves.


def _rr_curve(lam: np.ndarray, epsilon: float) -> np.ndarray:
    """``D_λ(Bern(p) ‖ Bern(1−p))``, ``p = e^ε/(1+e^ε)``: binary randomized response at ε.

    The closed form ``1/(λ−1) · log(p^λ (1−p)^{1−λ} + (1−p)^λ p^{1−λ})`` (Kairouz et al.,
    arXiv:1311.0776v4, Thm 2.1 gives why it bounds every ε-DP pair) equals
    ``log(cosh((λ−½)ε) / cosh(ε/2)) / (λ−1)``, evaluated here as
    ``ε + log1p(−(1−p)(1 − e^{−2(λ−1)ε})) / (λ−1)``: no overflow for large λ or ε, no 0/0 as
    λ → 1 (the limit is the KL divergence ε·tanh(ε/2)), and exactly ε at λ = ∞.
    """
    if epsilon == 0.0:
        return np.zeros_like(lam)
    q = math.exp(-float(np.logaddexp(0.0, epsilon)))  # 1 − p = 1/(1 + e^ε), no overflow
    t = lam - 1.0
    with np.errstate(over="ignore"):  # 2tε may overflow to ∞: then e^{−2tε} = 0, as it should
        out = epsilon + np.log1p(-q * -np.expm1(-2.0 * t * epsilon)) / t  # exactly ε at λ = ∞
    return np.clip(out, 0.0, epsilon)  # 0 ≤ D_λ ≤ ε; the clip only removes rounding


def _linear_curve(lam: np.ndarray, slope: float) -> np.ndarray:
    """``slope · λ`` with ``0 · ∞ = 0`` (a zero slope claims D_λ = 0 at every order)."""
    if slope == 0.0:
        return np.zeros_like(lam)
    return slope * lam


def _tabulated_curve(lam: np.ndarray, orders: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``min_{λ_i ≥ λ} ε(λ_i)``; +inf above the largest order (van Erven & Harremoës, Thm 3)."""
    suffix_min = np.minimum.accumulate(values[::-1])[::-1]  # suffix_min[i] = min(values[i:])
    index = np.searchsorted(orders, lam, side="left")  # first tabulated order ≥ λ
    padded = np.append(suffix_min, np.inf)
    return padded[index]


def _call_curve(curve: Callable[[Any], Any], lam: np.ndarray) -> np.ndarray:
    """``curve`` at every λ: one vectorized call when it returns the right shape, else a loop."""
    values = None
    try:
        out = np.asarray(curve(lam.copy()), dtype=np.float64)
        if out.shape == lam.shape:
            values = out
    except Exception:  # noqa: BLE001 - a scalar-only curve; evaluated order by order below
        values = None
    if values is None:
        values = np.empty_like(lam)
        for i, order in enumerate(lam):
            try:
                values[i] = float(np.asarray(curve(float(order)), dtype=np.float64))
            except Exception as err:  # noqa: BLE001
                raise ValueError(f"curve failed at λ = {order:g}: {err}") from err
    bad = np.isnan(values) | (values < 0.0)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(
            f"curve returned ε(λ) = {values[i]!r} at λ = {lam[i]:g}; a claimed ε(λ) must be "
            "≥ 0 (inf allowed) and not NaN"
        )
    return values


# --------------------------------------------------------------------------------------------
# dp_accounting (optional dependency, imported lazily).


def _dp_accounting() -> Any:
    try:
        import dp_accounting
        from dp_accounting.rdp import rdp_privacy_accountant  # noqa: F401
    except ImportError as err:
        raise ImportError(_DP_ACCOUNTING_HINT) from err
    return dp_accounting


def _neighboring_relation(value: Any) -> Any:
    relation = _dp_accounting().NeighboringRelation
    if value is None:
        return relation.ADD_OR_REMOVE_ONE
    if isinstance(value, relation):
        return value
    if isinstance(value, str) and value.upper() in relation.__members__:
        return relation[value.upper()]
    raise ValueError(
        f"neighboring_relation must be None, a dp_accounting.NeighboringRelation or one of "
        f"{tuple(relation.__members__)}; got {value!r}"
    )


def _accountant_rdp(event: Any, relation: Any, lam: np.ndarray) -> np.ndarray:
    """The RDP of ``event`` at each finite λ from dp_accounting's RDP accountant; +inf at λ = ∞.

    ``RdpAccountant.rdp`` is public in dp_accounting 0.6.0 (a copy of ``_rdp``). Infinite orders
    are not handed to it (its Laplace branch refuses them) and claim nothing; an order where it
    gives NaN claims nothing either (+inf, never a NaN back to the caller); tiny negative values
    are rounding (D_λ ≥ 0).
    """
    from dp_accounting.rdp import RdpAccountant

    out = np.full(lam.shape, np.inf)
    finite = np.isfinite(lam)
    if np.any(finite):
        accountant = RdpAccountant(orders=list(lam[finite]), neighboring_relation=relation)
        values = np.asarray(accountant.compose(event).rdp, dtype=np.float64)
        out[finite] = np.where(np.isnan(values), np.inf, np.maximum(values, 0.0))
    return out
