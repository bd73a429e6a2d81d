"""A claim's trade-off curve f, the input of the f-DP one-run test (:mod:`.fdp`).

* ε-DP, (ε, δ)-DP and μ-GDP claims: their exact curves, :func:`rdpjax.claims.tradeoff`
  (Dong, Roth, Su, arXiv:1905.02383v3, eqs. (4) and (6)).
* ρ-zCDP, RDP curves and tables, dp_accounting events: an RDP bound ε(λ) at order λ > 1
  implies (ε(λ) + log(1 − 1/λ) − log(δλ)/(λ − 1), δ)-DP for every δ in (0, 1) (Canonne, Kamath,
  Steinke, arXiv:2004.00010v4, Prop. 12; the conversion dp_accounting's RDP accountant uses,
  tighter than Mironov's arXiv:1702.07476v3 Prop. 3), hence f_{ε,δ}-DP for each (DRS
  Prop. 2.5), hence
  ``max_{λ, δ} f_{ε_λ(δ), δ}``-DP (a mechanism meeting several trade-off bounds meets their
  maximum). Taken over a finite grid of orders and δ, the curve is a valid lower bound on the
  claim's trade-off, if not its tightest (the exact RDP region, e.g. Balle et al.
  arXiv:1905.09982, is tighter): a refutation through it refutes the claim; a non-refutation
  says less than an exact curve would.

Every curve here is symmetric (DP claims hold for both orders of a neighbouring pair), as the
two-sided guesses of :mod:`.fdp` need.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rdpjax.canaries.fdp import eps_delta_curve
from rdpjax.claims import SET_KINDS, Claim, as_claim, tradeoff

__all__ = ["ORDERS", "DELTAS", "claim_curve", "rdp_conversion"]

ORDERS = np.geomspace(1.05, 512.0, 64)
"""Orders λ at which an RDP-type claim is read."""

DELTAS = np.geomspace(1e-14, 0.5, 56)
"""δ at which each order's (ε, δ) implication is taken."""


def rdp_conversion(claim: Claim) -> tuple[np.ndarray, np.ndarray]:
    """The finite (ε, δ) pairs an RDP-type claim implies (CKS Prop. 12), as two flat arrays.

    Orders where the claim says nothing (ε(λ) = +inf) are dropped.

    Raises:
        ValueError: when the claim implies no finite ε at any order of :data:`ORDERS`.
    """
    values = np.asarray(claim(ORDERS), np.float64)
    keep = np.isfinite(values)
    if not keep.any():
        raise ValueError(f"claim {claim} implies no finite RDP value at orders 1.05 to 512")
    lam, eps_lam = ORDERS[keep][:, None], values[keep][:, None]
    # CKS Prop. 12: ε = ε(λ) + log(1 − 1/λ) − log(δλ)/(λ − 1); a negative ε is read as 0.
    eps = eps_lam + np.log1p(-1.0 / lam) - np.log(DELTAS[None, :] * lam) / (lam - 1.0)
    eps = np.maximum(eps, 0.0)
    deltas = np.broadcast_to(DELTAS[None, :], eps.shape)
    return eps.ravel(), deltas.ravel()


def claim_curve(claim: Claim) -> Callable[[np.ndarray], np.ndarray]:
    """The trade-off lower bound ``a ↦ f(a)`` a claim implies, vectorized over ``a``.

    Args:
        claim: any :class:`rdpjax.claims.Claim`.

    Returns:
        a callable mapping an array of type I errors in [0, 1] to f at each (same shape).

    Raises:
        ValueError: for something that is not a claim, or an RDP table with no finite value.
    """
    claim = as_claim(claim)
    if claim is None:
        raise ValueError("claim must be a Claim, not None")
    if claim.kind in SET_KINDS:
        return lambda a: tradeoff(claim, a)
    eps, deltas = rdp_conversion(claim)

    def curve(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, np.float64)
        return eps_delta_curve(a[..., None], eps, deltas).max(axis=-1)

    return curve
