"""Which orders λ to bound when the user names none: the policy, claim by claim.

Without a claim the bound is reported at paper 000's orders λ = 2, 5, 7 (its §V;
:data:`rdpjax.estimator.orders.DEFAULT_ORDERS`, the estimator's own). With a claim the
question is whether *some* order refutes it, and the orders that do depend on the claim's shape: an
ε-DP claim is tightest against the truth at high orders (its curve, that of randomized response,
tends to ε), a zCDP claim ρλ at any order where the estimate is precise. So with a claim the bound
is computed on a wide grid, :data:`CLAIM_ORDERS`, every bound made simultaneous by the Bonferroni
correction (``docs/methods.md`` §2.6, §6; ``rdpjax.estimator.api``), and the claim is
refuted when any of them exceeds it. A tabulated claim (``rdpjax.claims.rdp`` with orders, or an
accountant's table such as Opacus' 151 orders) is checked on the same grid, cut at its largest
order (:func:`tabulated_claim_orders`), not at its own orders: the claim already says
``ε(λ) ≤ min_{λ_i ≥ λ} ε(λ_i)`` at every λ (``rdpjax.claims.rdp``), and 302 bounds at α/302 each
would be much looser than 18.

Why a fixed wide grid and not a pilot that picks the order: the Bonferroni price of the grid is
small (|Φ⁻¹(α/K)| from 2.39 at K = 6 bounds to 2.77 at K = 18, α = 0.05), while a pilot spends draws
the bound cannot reuse and, measured, steers the certification to the high order where a lone bound
from few draws is least valid (randomized response at n = 10⁴: its true curve refuted in 8.0% of
audits; ``benchmarks/calibration/claim_pilot.py``). The grid stops at λ = 30 because the
delta-method bound loses coverage at higher orders on discrete laws with a small cell (randomized
response at n = 10⁴: per-bound coverage 0.98 at λ = 50 and 0.955 at λ = 100 against a nominal
0.998). Coverage and power of this grid: ``python benchmarks/calibration/claim_orders.py`` (tables
in ``docs/claims.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rdpjax.estimator.orders import DEFAULT_ORDERS

__all__ = [
    "CLAIM_ORDERS",
    "SMALL_N",
    "SMALL_N_CLAIM_ORDERS",
    "default_orders",
    "tabulated_claim_orders",
]

CLAIM_ORDERS: tuple[float, ...] = (1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0)
"""Orders searched for a refutation when there is a claim (simultaneous bounds)."""

SMALL_N = 10_000
"""Below this many outputs per side the claim grid stops at λ = 5 (:data:`SMALL_N_CLAIM_ORDERS`)."""

SMALL_N_CLAIM_ORDERS: tuple[float, ...] = (1.5, 2.0, 3.0, 5.0)
"""The claim grid below :data:`SMALL_N` outputs per side. High orders weigh the rarest outputs
most, and with few draws per output the delta method misses there: randomized response (ε0 =
1.5 on 10 bits, 1024 outputs) at n = 10³ had its bound above the truth in 14.5% of 200
replications on :data:`CLAIM_ORDERS` (λ = 30: 14.5%, λ = 7: 2.5%) and in 0% on these orders;
at n = 3·10³ in 2%. The cut depends on n alone, fixed before any draw, so it keeps the bounds
valid."""


def tabulated_claim_orders(tabulated: Sequence[float], grid: Sequence[float]) -> np.ndarray:
    """The orders at which a claim tabulated at ``tabulated`` is checked: ``grid`` cut at its top.

    A table ``ε(λ_i) ≤ v_i`` claims ``ε(λ) ≤ min_{λ_i ≥ λ} v_i`` at *every* λ up to its largest
    order λ_k, because D_λ is non-decreasing in λ (van Erven & Harremoës, "Rényi divergence and
    Kullback-Leibler divergence", arXiv:1206.2459v2, Thm 3): a lower bound L(λ') on D_λ' is a
    lower bound on D_λ for every λ ≥ λ'. So a bound at any grid order λ' ≤ λ_k is compared with
    the smallest tabulated value at an order ≥ λ' (what ``claim(λ')`` returns, and what a
    report's ``claimed`` column shows), and need not sit on a tabulated order. Above λ_k the
    table claims nothing (+inf): grid orders there could never refute it, so they are dropped
    rather than charged to the Bonferroni correction. λ_k itself is added when it lies inside
    the grid's range and off it (a table ending at λ = 4 is checked at 1.5, 2, 3, 4), so a small
    table is still compared at its last, least-constrained order. Orders above the grid's top
    (λ = 30, or 5 at small n) are never added: the grid stops there for the bound's coverage.
    A table whose orders all lie below the grid's smallest is checked at its own orders.

    The result depends on the claim and n only, never on the draws, so the bounds keep their
    level. Opacus' 151 orders (1.1 … 10.9, 12 … 63) become the 9 orders of :data:`CLAIM_ORDERS`.

    Args:
      tabulated: the table's orders (finite, > 1).
      grid: the claim grid at this n, ascending.

    Returns:
      Ascending float64 array.
    """
    table = np.asarray(sorted(tabulated), np.float64)
    top = float(table[-1])
    grid_arr = np.asarray(grid, np.float64)
    kept = grid_arr[grid_arr <= top]
    if kept.size == 0:
        return table
    if top < grid_arr[-1] and top not in kept:
        kept = np.append(kept, top)
    return kept


def default_orders(claim: object | None = None, n: int | None = None) -> np.ndarray:
    """The orders to bound for ``claim`` (an ``rdpjax.claims.Claim`` or ``None``) at ``n``.

    Args:
      claim: the claim to check, or ``None``.
      n: outputs per side (``None``: large).

    Returns:
      ``DEFAULT_ORDERS`` without a claim; ``CLAIM_ORDERS`` with one (``SMALL_N_CLAIM_ORDERS``
      when ``n < SMALL_N``), for a tabulated claim cut at its largest order
      (:func:`tabulated_claim_orders`). A float64 array.
    """
    if claim is None:
        return np.asarray(DEFAULT_ORDERS, np.float64)
    small = n is not None and n < SMALL_N
    grid = SMALL_N_CLAIM_ORDERS if small else CLAIM_ORDERS
    tabulated: Sequence[float] | None = getattr(claim, "orders", None)
    if tabulated:
        return tabulated_claim_orders(tabulated, grid)
    return np.asarray(grid, np.float64)
