"""The orders λ the estimator reports when the user names none: paper 000's λ = 2, 5, 7.

Which orders to bound *with a claim* is a policy of the claims, not of the estimator:
:mod:`rdpjax.claims.orders` (the wide grid :data:`~rdpjax.claims.orders.CLAIM_ORDERS`, cut at
small n and at a tabulated claim's largest order).
"""

from __future__ import annotations

__all__ = ["DEFAULT_ORDERS"]

DEFAULT_ORDERS: tuple[float, ...] = (2.0, 5.0, 7.0)
"""Orders reported when there is no claim: those of paper 000 §V."""
