"""Privacy claims as curves λ ↦ claimed ε(λ), and lower bounds checked against them.

A claim about a mechanism (ε-DP, ρ-zCDP, μ-GDP, an RDP curve, a ``dp_accounting`` event) is
turned into the *tightest* upper bound on ``ε(λ) = sup_{x~x'} D_λ(A(x) ‖ A(x'))`` that it
implies at every order λ > 1. A simultaneous lower bound above that curve at any order refutes
the claim; :func:`check_claim` does the comparison and words the verdict.

Implications (each is cited again where it is coded):

* ε-DP ⇒ ``ε(λ) ≤ D_λ(RR_ε)``, the divergence of binary randomized response at ε: every ε-DP
  pair of output laws is a post-processing of RR_ε's pair (Kairouz, Oh, Viswanath, "The
  composition theorem for differential privacy", arXiv:1311.0776v4, Thm 2.1: the ε-DP privacy
  region is RR_ε's), and D_λ obeys data processing. The curve lies below ``min(ε, λε²/2)``
  (Bun & Steinke, arXiv:1605.02065v1, Prop. 3.3) and tends to ε as λ → ∞.
* ρ-zCDP ⇒ ``ε(λ) ≤ ρλ`` (Bun & Steinke, Def. 1.1, ξ = 0).
* μ-GDP ⇒ ``ε(λ) ≤ λμ²/2``: a μ-GDP pair is a post-processing of ``N(0,1), N(μ,1)`` (Dong, Roth,
  Su, "Gaussian differential privacy", arXiv:1905.02383v3, Blackwell's theorem, Thm 2.10), whose
  D_λ is λμ²/2 (Bun & Steinke, Lemma 2.4).
* RDP values at orders λ_1 < … < λ_k ⇒ ``ε(λ) ≤ min_{λ_i ≥ λ} ε(λ_i)``, since D_λ is
  non-decreasing in λ (van Erven & Harremoës, arXiv:1206.2459v2, Thm 3); nothing above λ_k.
* (ε, δ)-DP with δ > 0 implies no finite ε(λ) at any order: :func:`approx_dp` claims have the
  curve +inf and are checked through their trade-off function instead (:mod:`.hypothesis`,
  :mod:`rdpjax.rejection`), as μ-GDP claims also can be.

Evaluation is on the host in float64 (claims are a handful of numbers per order); O(L) per call,
plus one ``dp_accounting`` composition for :func:`from_dp_accounting`.

Layout: :mod:`._claim` (the :class:`Claim` value type, :func:`as_claim`),
:mod:`._kernels` (each kind's curve evaluated at orders), :mod:`.curves` (:func:`pure_dp`,
:func:`zcdp`, :func:`gdp`, :func:`rdp`), :mod:`.accounting` (:func:`from_dp_accounting`),
:mod:`.orders` (which orders λ to bound for a claim when the user names none),
:mod:`.check` (:class:`ClaimCheck`, :func:`check_claim`), :mod:`.hypothesis` (the trade-off function
f(a) and hockey-stick curve δ(ε) of ε-DP, (ε, δ)-DP and μ-GDP claims).
"""

from rdpjax.claims._claim import KINDS, Claim, as_claim
from rdpjax.claims.accounting import from_dp_accounting
from rdpjax.claims.check import ClaimCheck, check_claim
from rdpjax.claims.curves import approx_dp, gdp, pure_dp, rdp, zcdp
from rdpjax.claims.hypothesis import SET_KINDS, hockey_stick, max_power, tradeoff

__all__ = [
    "KINDS",
    "SET_KINDS",
    "approx_dp",
    "Claim",
    "ClaimCheck",
    "as_claim",
    "check_claim",
    "from_dp_accounting",
    "gdp",
    "hockey_stick",
    "max_power",
    "pure_dp",
    "rdp",
    "tradeoff",
    "zcdp",
]
