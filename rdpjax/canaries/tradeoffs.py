"""A claim's trade-off curve f, the input of the f-DP one-run test (:mod:`.fdp`).

* ε-DP, (ε, δ)-DP and μ-GDP claims: their exact curves, :func:`rdpjax.claims.tradeoff`
  (Dong, Roth, Su, arXiv:1905.02383v3, eqs. (4) and (6)).
* dp_accounting events (:func:`rdpjax.claims.from_dp_accounting`): read from the event's privacy
  loss distribution (:func:`pld_conversion`). dp_accounting's ``PLDAccountant`` gives an upper
  bound δ(ε) on the hockey-stick divergence of both orders of the neighbouring pair at every ε
  (pessimistic discretization), so the mechanism is (ε, δ(ε))-DP at each ε of a grid, hence
  f_{ε,δ(ε)}-DP for each (DRS Prop. 2.5), hence ``max_ε f_{ε,δ(ε)}``-DP. With the exact δ(ε)
  and every ε ≥ 0 that maximum *is* the mechanism's symmetrized trade-off curve (DRS
  Prop. 2.12, the primal–dual view); on a finite grid it is a valid lower bound within about
  10⁻⁵ of it for the Gaussian mechanism (``tests/canaries``), much tighter than the RDP route.
  Events the PLD accountant does not support take the RDP route below.
* ρ-zCDP, RDP curves and tables, dp_accounting events without a PLD: an RDP bound ε(λ) at
  order λ > 1 implies (ε(λ) + log(1 − 1/λ) − log(δλ)/(λ − 1), δ)-DP for every δ in (0, 1)
  (Canonne, Kamath, Steinke, arXiv:2004.00010v4, Prop. 12; the conversion dp_accounting's RDP
  accountant uses, tighter than Mironov's arXiv:1702.07476v3 Prop. 3), hence f_{ε,δ}-DP for
  each (DRS Prop. 2.5), hence
  ``max_{λ, δ} f_{ε_λ(δ), δ}``-DP (a mechanism meeting several trade-off bounds meets their
  maximum). Taken over a finite grid of orders and δ, the curve is a valid lower bound on the
  claim's trade-off, if not its tightest (the exact RDP region, e.g. Balle et al.
  arXiv:1905.09982, is tighter): a refutation through it refutes the claim; a non-refutation
  says less than an exact curve would.

Every curve here is symmetric (DP claims hold for both orders of a neighbouring pair), as the
two-sided guesses of :mod:`.fdp` need.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

import numpy as np

from rdpjax.canaries.fdp import eps_delta_curve
from rdpjax.claims import SET_KINDS, Claim, as_claim, tradeoff

__all__ = ["ORDERS", "DELTAS", "PLD_EPSILONS", "claim_curve", "pld_conversion", "rdp_conversion"]

ORDERS = np.geomspace(1.05, 512.0, 64)
"""Orders λ at which an RDP-type claim is read."""

DELTAS = np.geomspace(1e-14, 0.5, 56)
"""δ at which each order's (ε, δ) implication is taken."""

PLD_EPSILONS = 512
"""Number of ε, evenly spaced from 0 to the ε at δ = 10⁻¹⁴, at which a PLD's δ(ε) is read."""

_PLD_DELTA_SLACK = 1e-10
"""Added to every δ(ε) read from a PLD: it covers the float64 rounding of dp_accounting's
running sums (δ(ε) = Σ_j (1 − e^{ε − ℓ_j}) p_j over up to ~10⁶ losses ℓ_j, each term off by at
most 2⁻⁵³), so rounding never makes the curve exceed the true one. It lowers f by ≤ 10⁻¹⁰."""


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


def pld_conversion(claim: Claim) -> tuple[np.ndarray, np.ndarray] | None:
    """The (ε, δ(ε)) pairs dp_accounting's PLD accountant gives a ``dp_accounting`` claim.

    ``PLDAccountant(neighboring_relation).compose(event)`` (dp_accounting ≥ 0.4, default
    discretization 10⁻⁴ with ``pessimistic_estimate=True``: its rounding makes every
    hockey-stick divergence it computes an upper estimate of the true one, the privacy buckets
    of Meiser & Mohammadi, CCS 2018, or the connect-the-dots PMF of Doroshenko et al.,
    arXiv:2207.04380, for the Gaussian; truncated tail mass goes to the infinite loss), then
    ``get_delta`` at :data:`PLD_EPSILONS` values of ε from 0 to the ε at δ = 10⁻¹⁴ (larger ε
    lower every f_{ε,δ} once δ(ε) stops falling). A PLD with both orders (``ADD_OR_REMOVE_ONE``
    with sampling) reports the larger δ of the two, as f_{ε,δ} needs.

    Cost: one accountant composition (one FFT convolution per composed event) and one pass over
    the PLD's losses; about 0.1-0.5 s for a composed Gaussian. The result is cached per claim.

    Args:
        claim: a claim of kind ``"dp_accounting"``.

    Returns:
        ``(epsilons, deltas)``, two read-only (K,) float64 arrays, ε ascending; or ``None``
        when the PLD accountant does not support the event (then use :func:`rdp_conversion`).
        A non-private event gives the single pair (0, 1): f = 0, nothing claimed.

    Raises:
        ValueError: for a claim of another kind.
    """
    if claim.kind != "dp_accounting":
        raise ValueError(f"claim must be of kind 'dp_accounting'; got {claim.kind!r}")
    return _pld_pairs(claim)


@functools.lru_cache(maxsize=16)
def _pld_pairs(claim: Claim) -> tuple[np.ndarray, np.ndarray] | None:
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    relation = dp_accounting.NeighboringRelation[claim.params["neighboring_relation"]]
    accountant = PLDAccountant(neighboring_relation=relation)
    event = claim._source  # noqa: SLF001 - the DpEvent the claim was built from
    if not accountant.supports(event):
        return None
    try:
        accountant.compose(event)
    except (MemoryError, OverflowError) as err:  # σ = 0.001: a 76 GiB discretization
        warnings.warn(
            f"the PLD accountant cannot compose this event ({type(err).__name__}); the claim is "
            "read through its RDP curve instead, a weaker trade-off that refutes no more often.",
            stacklevel=4,
        )
        return None
    top = None
    for target in (1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 0.5):
        top = float(accountant.get_epsilon(target))
        if math.isfinite(top):
            break
    if top is None or not math.isfinite(top):  # a non-private event: δ(ε) = 1 at every ε
        eps, deltas = np.zeros(1), np.ones(1)
    else:
        eps = np.linspace(0.0, top, PLD_EPSILONS)
        deltas = np.broadcast_to(np.asarray(accountant.get_delta(eps), np.float64), eps.shape)
        deltas = np.clip(deltas + _PLD_DELTA_SLACK, 0.0, 1.0)  # see _PLD_DELTA_SLACK
    eps.flags.writeable = False
    deltas = np.array(deltas)
    deltas.flags.writeable = False
    return eps, deltas


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
    pairs = pld_conversion(claim) if claim.kind == "dp_accounting" else None
    eps, deltas = rdp_conversion(claim) if pairs is None else pairs

    def curve(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, np.float64)
        # max_k f_{ε_k, δ_k}(a): DRS Prop. 2.5 for each pair, then their maximum
        return eps_delta_curve(a[..., None], eps, deltas).max(axis=-1)

    return curve
