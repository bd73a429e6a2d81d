"""Simultaneous lower bounds on ε(λ) checked against a :class:`~rdpjax.claims.Claim`.

:func:`check_claim` evaluates the claim at the bounded orders and returns a :class:`ClaimCheck`
that says which orders refute it and words the verdict. O(L) on the host for L orders.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from rdpjax._json import json_floats
from rdpjax.claims._claim import Claim, _orders_array, _real, as_claim

__all__ = ["ClaimCheck", "check_claim"]


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.4f}" if x == 0 or abs(x) >= 1e-3 else f"{x:.3g}"


def _fmt_lam(lam: float) -> str:
    return "∞" if math.isinf(lam) else f"{lam:g}"


@dataclasses.dataclass(frozen=True, eq=False)
class ClaimCheck:
    """Simultaneous lower bounds on ε(λ) compared with a claim; built by :func:`check_claim`.

    If the bounds hold simultaneously with probability ≥ 1 − α and the claim is true, then
    ``lower ≤ ε(λ) ≤ claim(λ)`` at every order on that event, so a true claim is refuted with
    probability ≤ α.

    Attributes:
        claim: the :class:`Claim`.
        lam: ``(L,)`` orders.
        claimed: ``(L,)`` ``claim(lam)`` (+inf where the claim implies nothing).
        lower: ``(L,)`` simultaneous lower bounds on ε(λ).
        alpha: family-wise level of the bounds.
        refuted_at: ``(L,)`` bool, ``lower > claimed``: the orders that refute the claim
            (:attr:`refuted` is the verdict, whether any does).
    """

    claim: Claim
    lam: np.ndarray
    claimed: np.ndarray
    lower: np.ndarray
    alpha: float
    refuted_at: np.ndarray

    @property
    def refuted(self) -> bool:
        """The verdict: whether any order refutes the claim (as every rdpjax result says it)."""
        return bool(np.any(self.refuted_at))

    @property
    def is_refuted(self) -> bool:
        """Same as :attr:`refuted`."""
        return self.refuted

    def _margins(self) -> np.ndarray:
        """``lower − claimed``, −inf where the claim implies nothing."""
        with np.errstate(invalid="ignore"):
            margin = self.lower - self.claimed
        return np.where(np.isinf(self.claimed), -np.inf, margin)

    def worst(self) -> int:
        """Index of the largest ``lower − claimed`` (the first finite claim on a tie at −inf)."""
        margin = self._margins()
        if np.all(margin == -np.inf) and np.any(np.isfinite(self.claimed)):
            return int(np.argmax(np.isfinite(self.claimed)))
        return int(np.argmax(margin))

    def verdict(self) -> str:
        """One line naming the deciding order and the margin."""
        conf = f"{100.0 * (1.0 - self.alpha):.10g}%"
        i = self.worst()
        lam, lo, cl = float(self.lam[i]), float(self.lower[i]), float(self.claimed[i])
        if self.is_refuted:
            k, total = int(np.sum(self.refuted_at)), self.refuted_at.size
            return (
                f"REFUTED: ε({_fmt_lam(lam)}) ≥ {_fmt(lo)} > claimed {_fmt(cl)} ({self.claim}) "
                f"by {_fmt(lo - cl)} at λ = {_fmt_lam(lam)} ({k} of {total} orders); "
                f"the bounds hold simultaneously at {conf}"
            )
        if not np.isfinite(cl):
            return (
                f"not refuted: the claim ({self.claim}) implies no finite ε(λ) at the checked "
                f"orders; the bounds hold simultaneously at {conf}"
            )
        return (
            f"not refuted: every lower bound ≤ the claim ({self.claim}); closest at "
            f"λ = {_fmt_lam(lam)}: lower {_fmt(lo)} vs claimed {_fmt(cl)} "
            f"(margin {_fmt(cl - lo)}); the bounds hold simultaneously at {conf}"
        )

    def to_dict(self) -> dict:
        """JSON-ready dict; infinite entries of ``lam``, ``claimed`` and ``lower`` are ``None``."""
        return {
            "claim": self.claim.to_dict(),
            "lam": json_floats(self.lam),
            "claimed": json_floats(self.claimed),
            "lower": json_floats(self.lower),
            "alpha": float(self.alpha),
            "refuted": self.refuted,
            "refuted_at": [bool(r) for r in self.refuted_at],
            "is_refuted": self.is_refuted,
            "worst": self.worst(),
            "verdict": self.verdict(),
        }


def check_claim(claim: Any, lam: Any, lower: Any, alpha: float) -> ClaimCheck:
    """Compare simultaneous lower bounds on ε(λ) with a claim.

    Args:
        claim: a :class:`Claim` (see :func:`as_claim`; ``None`` is refused here).
        lam: ``(L,)`` orders in (1, inf].
        lower: ``(L,)`` lower bounds on ε(λ), simultaneous at level 1 − ``alpha`` (−inf allowed:
            nothing learned; NaN refused).
        alpha: their family-wise level, in (0, 1).

    Returns:
        A :class:`ClaimCheck` (arrays read-only).

    Raises:
        ValueError: for a missing or non-Claim ``claim``, ``lam`` or ``lower`` not 1-D of the
            same non-zero length, λ ≤ 1 or NaN, NaN in ``lower``, ``alpha`` outside (0, 1).
    """
    claim = as_claim(claim)
    if claim is None:
        raise ValueError("claim must be a Claim (pure_dp(ε), zcdp(ρ), …); got None")
    lam_arr = _orders_array(lam)
    if np.ndim(lam) > 1 or lam_arr.ndim != 1 or lam_arr.size == 0:
        raise ValueError(f"lam must be a non-empty 1-D array of orders; got shape {np.shape(lam)}")
    try:
        low = np.asarray(lower, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"lower must be real numbers; got {lower!r}") from None
    if low.shape != lam_arr.shape:
        raise ValueError(f"lower must have shape {lam_arr.shape} like lam; got {low.shape}")
    if np.any(np.isnan(low)):
        raise ValueError("lower must not contain NaN")
    a = _real(alpha, "alpha")
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    claimed = claim(lam_arr)
    refuted = low > claimed
    arrays = [lam_arr.copy(), claimed, low.copy(), refuted]
    for arr in arrays:
        arr.setflags(write=False)
    return ClaimCheck(claim, arrays[0], arrays[1], arrays[2], a, arrays[3])
