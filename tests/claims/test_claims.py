"""Privacy claims as curves λ ↦ claimed ε(λ) (rdpjax.claims), against independent references.

References written here, not taken from rdpjax: D_λ of Bern(p) vs Bern(1−p) in mpmath at 50
digits; Gaussian and sampled-Gaussian Rényi divergences by scipy quadrature (relative accuracy
requested 1e-12, so rtol 1e-9 leaves three orders of margin); the known closed forms kλ/(2σ²).
"""

import dataclasses
import json
import math
import sys

import dp_accounting as dpa
import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from rdpjax.claims import (
    Claim,
    ClaimCheck,
    as_claim,
    check_claim,
    from_dp_accounting,
    gdp,
    pure_dp,
    rdp,
    zcdp,
)
from rdpjax.mechanisms import Gaussian, Laplace, RandomizedResponse, from_sampler

LAMS = [1.001, 1.5, 2.0, 3.7, 10.0, 100.0, 1e4]
EPSILONS = [1e-3, 0.1, 1.0, 3.0, 10.0, 40.0]


def rr_renyi_mpmath(lam, eps):
    """D_λ(Bern(p) ‖ Bern(1−p)), p = e^ε/(1+e^ε), straight from the definition at 50 digits."""
    with mpmath.workdps(50):
        lam, eps = mpmath.mpf(lam), mpmath.mpf(eps)
        p, p_bar = mpmath.exp(eps) / (1 + mpmath.exp(eps)), 1 / (1 + mpmath.exp(eps))
        P, Q = [p, p_bar], [p_bar, p]
        total = sum(pi**lam * qi ** (1 - lam) for pi, qi in zip(P, Q, strict=True))
        return float(mpmath.log(total) / (lam - 1))


def gaussian_renyi_quad(lam, shift, sigma):
    """D_λ(N(shift, σ²) ‖ N(0, σ²)) by quadrature of ∫ p^λ q^{1−λ}, in log space."""

    def integrand(x):
        return math.exp(
            lam * stats.norm.logpdf(x, shift, sigma) + (1 - lam) * stats.norm.logpdf(x, 0, sigma)
        )

    centre = lam * shift  # where p^λ q^{1−λ} ∝ N(λ·shift, σ²) peaks
    value, _ = integrate.quad(
        integrand, centre - 40 * sigma, centre + 40 * sigma, epsabs=0, epsrel=1e-12, limit=200
    )
    return math.log(value) / (lam - 1)


def sampled_gaussian_renyi_quad(lam, q, sigma):
    """D_λ((1−q)N(0,σ²) + qN(1,σ²) ‖ N(0,σ²)) by quadrature (the order dp_accounting reports)."""

    def integrand(x):
        log_ratio = math.log1p(q * math.expm1((2 * x - 1) / (2 * sigma**2)))
        return math.exp(lam * log_ratio + stats.norm.logpdf(x, 0, sigma))

    value, _ = integrate.quad(
        integrand, -60, 80, epsabs=0, epsrel=1e-12, limit=500, points=[0, 1, 10, 20]
    )
    return math.log(value) / (lam - 1)


# --------------------------------------------------------------------------------------------
# ε-DP: the randomized-response curve.


@pytest.mark.parametrize("eps", EPSILONS)
def test_pure_dp_matches_bernoulli_divergence(eps):
    # float64 rounding, amplified at most ~1/(λε) by the cancellation ε − ε + D: ≤ 1e-12 here.
    expected = [rr_renyi_mpmath(lam, eps) for lam in LAMS]
    np.testing.assert_allclose(pure_dp(eps)(LAMS), expected, rtol=1e-10, atol=0)


@pytest.mark.parametrize("eps", EPSILONS)
def test_pure_dp_below_eps_and_zcdp_bound_and_monotone(eps):
    lam = np.geomspace(1.0001, 1e6, 400)
    curve = pure_dp(eps)(lam)
    assert np.all(curve <= eps)
    # Bun & Steinke, arXiv:1605.02065, Prop. 3.3: ε-DP ⇒ (ε²/2)-zCDP.
    assert np.all(curve <= lam * eps**2 / 2 * (1 + 1e-12))
    assert np.all(np.diff(curve) >= -1e-15 * eps)  # D_λ non-decreasing in λ
    # λ → ∞: D_λ = ε − log(1 + e^{−ε})/(λ−1) + o(1/λ), and D_∞ = ε exactly.
    big = 1e6
    assert abs(pure_dp(eps)(big) - (eps - math.log1p(math.exp(-eps)) / (big - 1))) < 1e-9
    assert pure_dp(eps)(np.inf) == eps


def test_pure_dp_limits_and_extremes():
    # λ → 1: the KL divergence ε·tanh(ε/2) of the two Bernoullis.
    assert pure_dp(1.0)(1 + 1e-9) == pytest.approx(math.tanh(0.5), rel=1e-7)
    np.testing.assert_array_equal(pure_dp(0.0)([1.5, 2.0, np.inf]), 0.0)
    # No overflow or NaN at extreme ε and λ (RuntimeWarnings are errors for rdpjax code).
    np.testing.assert_allclose(pure_dp(1e5)([1.5, 1e300, np.inf]), 1e5, rtol=1e-12)
    assert pure_dp(700.0)(2.0) == pytest.approx(rr_renyi_mpmath(2.0, 700.0), rel=1e-12)
    assert pure_dp(2.0)(np.array([[2.0, 3.0]])).shape == (1, 2)


def test_pure_dp_is_tight_and_bounds_every_eps_dp_mechanism():
    # Binary randomized response (the zoo's exact divergence) attains the curve ...
    rr = RandomizedResponse(1.5)
    x, xp = rr.reference_pair()
    exact = [rr.divergence(lam, x, xp) for lam in LAMS]
    np.testing.assert_allclose(rr.claim(LAMS), exact, rtol=1e-10)
    # ... and the ε-DP Laplace mechanism (ε = 1/b) stays below it, strictly at finite λ.
    lap = Laplace(2.0)
    x, xp = lap.reference_pair()
    exact = np.array([lap.divergence(lam, x, xp) for lam in LAMS])
    claimed = lap.claim(LAMS)
    assert lap.claim == pure_dp(0.5)
    assert np.all(exact < claimed)


# --------------------------------------------------------------------------------------------
# zCDP, GDP and the Gaussian mechanism.


@pytest.mark.parametrize("lam", [1.5, 2.0, 7.0, 20.0])
def test_zcdp_and_gdp_match_gaussian_divergence(lam):
    shift, sigma = 1.3, 2.0
    rho = shift**2 / (2 * sigma**2)
    assert zcdp(rho)(lam) == pytest.approx(gaussian_renyi_quad(lam, shift, sigma), rel=1e-9)
    mu = 0.7
    assert gdp(mu)(lam) == pytest.approx(gaussian_renyi_quad(lam, mu, 1.0), rel=1e-9)


def test_zcdp_gdp_at_infinity_and_zero():
    np.testing.assert_array_equal(zcdp(0.1)([2.0, np.inf]), [0.2, np.inf])
    np.testing.assert_array_equal(zcdp(0.0)([2.0, np.inf]), [0.0, 0.0])
    np.testing.assert_array_equal(gdp(0.0)(np.inf), [0.0])
    np.testing.assert_allclose(gdp(2.0)([3.0]), [6.0])  # λμ²/2 = 3·4/2


def test_gaussian_claim_equals_exact_divergence_on_reference_pair():
    mech = Gaussian(5.0)
    x, xp = mech.reference_pair()
    lams = [1.5, 2.0, 10.0, 250.0]
    assert mech.claim == zcdp(1 / 50)
    np.testing.assert_allclose(mech.claim(lams), [mech.divergence(l, x, xp) for l in lams])


def test_gaussian_claim_none_when_traced_or_batched():
    seen = []

    def f(scale):
        seen.append(Gaussian(scale).claim)
        return scale

    jax.jit(f)(5.0)
    assert seen == [None]
    assert Gaussian(jnp.array([1.0, 2.0])).claim is None


# --------------------------------------------------------------------------------------------
# RDP curves.


def test_tabulated_rdp_monotone_extension_by_hand():
    claim = rdp({4: 0.8, 2: 0.5, 8: 0.7})
    lam = [1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 9.0, np.inf]
    # D_λ ≤ D_4 ≤ ... so ε(3) ≤ min(0.8, 0.7); ε(4) ≤ 0.7 too; nothing above 8.
    np.testing.assert_array_equal(claim(lam), [0.5, 0.5, 0.7, 0.7, 0.7, 0.7, np.inf, np.inf])
    assert claim.orders == (2.0, 4.0, 8.0)
    same = [rdp(([2, 4, 8], [0.5, 0.8, 0.7])), rdp([0.8, 0.5, 0.7], orders=[4, 2, 8])]
    for other in same:
        np.testing.assert_array_equal(other(lam), claim(lam))
    tab = rdp(lambda l: 0.1 * l, orders=[2.0, 3.0])
    np.testing.assert_allclose(tab(2.5), [0.3])
    assert tab.orders == (2.0, 3.0)
    np.testing.assert_array_equal(rdp({2: np.inf, 3: 1.0})(2.0), [1.0])  # inf entries allowed


def test_callable_rdp_vectorized_and_scalar():
    np.testing.assert_allclose(rdp(lambda l: l / 10)([2.0, 3.0]), [0.2, 0.3])
    scalar_only = rdp(lambda l: 0.1 * l if l < 5 else 0.5)  # `if` on an array raises
    np.testing.assert_allclose(scalar_only([2.0, 6.0]), [0.2, 0.5])
    np.testing.assert_allclose(rdp(lambda l: 0.25)([2.0, 9.0]), [0.25, 0.25])
    with pytest.raises(ValueError, match=r"λ = 3"):
        rdp(lambda l: 2.5 - l)([2.0, 3.0])
    with pytest.raises(ValueError, match=r"NaN"):
        rdp(lambda l: np.where(l > 2, np.nan, 1.0))([2.0, 3.0])


# --------------------------------------------------------------------------------------------
# dp_accounting.


def test_dp_accounting_self_composed_gaussian():
    sigma, k = 2.0, 7
    claim = from_dp_accounting(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), k))
    lam = np.array([5.0, 1.5, 3.7, 64.0, np.inf])  # unsorted on purpose
    expected = k * lam / (2 * sigma**2)
    np.testing.assert_allclose(claim(lam), expected, rtol=1e-12)
    assert claim.kind == "dp_accounting"
    json.dumps(claim.to_dict(), allow_nan=False)
    assert claim.to_dict()["params"]["event"]["count"] == k


def test_dp_accounting_poisson_sampled_gaussian_vs_quadrature():
    q, sigma = 0.05, 1.2
    claim = from_dp_accounting(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)))
    for lam in [2.0, 5.0, 12.0]:  # integer orders: dp_accounting's binomial sum is exact
        assert claim(lam) == pytest.approx(sampled_gaussian_renyi_quad(lam, q, sigma), rel=1e-9)
    # Fractional orders: its series sums |binomial coefficients|, an upper bound (still a claim).
    assert claim(2.5) >= sampled_gaussian_renyi_quad(2.5, q, sigma)


def test_dp_accounting_randomized_response_equals_pure_dp():
    noise = 0.3  # keep w.p. 1 − noise, else a uniform bit: Bern(1 − noise/2) vs its mirror
    eps = math.log((1 - noise / 2) / (noise / 2))
    event = dpa.RandomizedResponseDpEvent(noise, 2)
    claim = from_dp_accounting(event, neighboring_relation="REPLACE_ONE", name="RR")
    np.testing.assert_allclose(claim(LAMS), pure_dp(eps)(LAMS), rtol=1e-12)
    assert str(claim) == "RR"
    with pytest.raises(ValueError, match="RandomizedResponseDpEvent"):
        from_dp_accounting(event)  # needs REPLACE_ONE


def test_dp_accounting_bad_inputs(monkeypatch):
    with pytest.raises(ValueError, match="event.*UnsupportedDpEvent"):
        from_dp_accounting(dpa.UnsupportedDpEvent())
    with pytest.raises(ValueError, match="event must be a dp_accounting.DpEvent"):
        from_dp_accounting(0.5)
    with pytest.raises(ValueError, match="neighboring_relation"):
        from_dp_accounting(dpa.GaussianDpEvent(1.0), neighboring_relation="neighbours")
    np.testing.assert_array_equal(from_dp_accounting(dpa.NonPrivateDpEvent())(2.0), [np.inf])
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    monkeypatch.setitem(sys.modules, "dp_accounting.rdp", None)
    with pytest.raises(ImportError, match="pip install dp-accounting"):
        from_dp_accounting(dpa.GaussianDpEvent(1.0))


# --------------------------------------------------------------------------------------------
# Validation.


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: pure_dp(-1.0), "epsilon"),
        (lambda: pure_dp(math.inf), "epsilon"),
        (lambda: pure_dp(math.nan), "epsilon"),
        (lambda: pure_dp("1"), "epsilon"),
        (lambda: pure_dp(True), "epsilon"),
        (lambda: pure_dp([1.0, 2.0]), "epsilon"),
        (lambda: pure_dp(1.0, delta=-1e-6), "delta"),
        (lambda: pure_dp(1.0, delta=math.nan), "delta"),
        (lambda: zcdp(-0.1), "rho"),
        (lambda: zcdp(math.inf), "rho"),
        (lambda: gdp(-1.0), "mu"),
        (lambda: gdp(math.nan), "mu"),
        (lambda: rdp({1.0: 0.5}), "orders"),
        (lambda: rdp({math.inf: 0.5}), "orders"),
        (lambda: rdp([0.1, 0.2], orders=[2.0, 2.0]), "orders must not repeat"),
        (lambda: rdp({2.0: -0.1}), "values"),
        (lambda: rdp({2.0: math.nan}), "values"),
        (lambda: rdp([0.1], orders=[2.0, 3.0]), "same length"),
        (lambda: rdp({2.0: 0.1}, orders=[2.0]), "orders must be None"),
        (lambda: rdp("0.5"), "curve"),
        (lambda: rdp([0.1, 0.2]), "curve"),
        (lambda: rdp(lambda l: -1.0, orders=[2.0]), "λ = 2"),
    ],
)
def test_bad_constructor_arguments(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_delta_refusal_message():
    with pytest.raises(ValueError) as info:
        pure_dp(1.0, delta=1e-5)
    message = str(info.value)
    assert "approx_dp(epsilon, delta)" in message


@pytest.mark.parametrize("lam", [1.0, 0.5, -2.0, math.nan, [2.0, 1.0], "2", None, True, 2 + 1j])
def test_bad_orders(lam):
    with pytest.raises(ValueError, match="lam"):
        pure_dp(1.0)(lam)


def test_as_claim():
    claim = zcdp(0.1)
    assert as_claim(None) is None
    assert as_claim(claim) is claim
    with pytest.raises(ValueError, match=r"use pure_dp\(1.0\)"):
        as_claim(1.0)
    with pytest.raises(ValueError, match="zcdp"):
        as_claim("1-DP")


def test_claims_are_immutable_hashable_and_serializable():
    claim = pure_dp(1.0)
    assert claim == pure_dp(1.0) and hash(claim) == hash(pure_dp(1.0))
    assert claim != pure_dp(2.0) and claim != zcdp(1.0)
    assert len({claim, pure_dp(1.0), rdp({2: 0.5}), rdp({2: 0.5})}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        claim.name = "other"
    with pytest.raises(TypeError):
        claim.params["epsilon"] = 2.0
    assert str(claim) == claim.name == "ε-DP, ε = 1"
    assert zcdp(0.02).name == "ρ-zCDP, ρ = 0.02"
    assert isinstance(claim, Claim) and isinstance(claim.params, dict)
    table = rdp({2: 0.5, 3: np.inf})
    assert table.to_dict() == {
        "name": table.name,
        "kind": "rdp",
        "params": {"orders": [2.0, 3.0], "values": [0.5, None]},
        "orders": [2.0, 3.0],
    }
    json.dumps(table.to_dict(), allow_nan=False)


# --------------------------------------------------------------------------------------------
# Checking bounds against a claim.


def test_check_claim_refuted():
    claimed7 = rr_renyi_mpmath(7.0, 1.0)
    check = check_claim(pure_dp(1.0), [2.0, 7.0, 20.0], [0.1, 1.0, 0.5], 0.05)
    assert isinstance(check, ClaimCheck)
    np.testing.assert_array_equal(check.refuted_at, [False, True, False])
    assert check.refuted and check.is_refuted
    assert check.is_refuted and check.worst() == 1
    verdict = check.verdict()
    assert verdict.startswith("REFUTED: ε(7) ≥ 1.0000 > claimed ")
    assert f"claimed {claimed7:.4f} (ε-DP, ε = 1)" in verdict
    assert f"by {1.0 - claimed7:.4f} at λ = 7" in verdict
    assert "95%" in verdict


def test_check_claim_not_refuted_names_closest_order():
    claim = zcdp(0.1)  # claimed 0.2, 0.5, 2.0
    check = check_claim(claim, [2.0, 5.0, 20.0], [0.15, 0.1, 1.0], 0.1)
    assert not check.is_refuted
    assert check.worst() == 0  # margin 0.05, not the largest lower bound (index 2)
    verdict = check.verdict()
    assert verdict.startswith("not refuted: every lower bound ≤ the claim (ρ-zCDP, ρ = 0.1)")
    assert "closest at λ = 2: lower 0.1500 vs claimed 0.2000 (margin 0.0500)" in verdict
    assert "90%" in verdict
    # Equality does not refute: the bound must exceed the claim.
    assert not check_claim(claim, [2.0], [0.2], 0.05).is_refuted


def test_check_claim_infinite_entries_and_json():
    check = check_claim(rdp({2: 0.5}), [2.0, 8.0, np.inf], [-np.inf, 3.0, 3.0], 0.05)
    assert not check.is_refuted and check.worst() == 0
    record = check.to_dict()
    text = json.dumps(record, allow_nan=False)
    assert record["claimed"] == [0.5, None, None]
    assert record["lower"] == [None, 3.0, 3.0] and record["lam"] == [2.0, 8.0, None]
    assert record["is_refuted"] is False and record["verdict"] == check.verdict()
    assert json.loads(text)["claim"]["kind"] == "rdp"
    only_inf = check_claim(rdp({2: 0.5}), [3.0], [1.0], 0.05)
    assert "implies no finite ε(λ)" in only_inf.verdict()
    with pytest.raises(ValueError):
        check.lower[0] = 1.0  # read-only arrays


@pytest.mark.parametrize(
    "args, match",
    [
        ((None, [2.0], [0.1], 0.05), "claim"),
        ((1.0, [2.0], [0.1], 0.05), r"pure_dp\(1.0\)"),
        ((pure_dp(1.0), [[2.0, 3.0]], [0.1, 0.2], 0.05), "lam"),
        ((pure_dp(1.0), [], [], 0.05), "lam"),
        ((pure_dp(1.0), [2.0, 1.0], [0.1, 0.2], 0.05), "lam"),
        ((pure_dp(1.0), [2.0, 3.0], [0.1], 0.05), "lower"),
        ((pure_dp(1.0), [2.0], [math.nan], 0.05), "lower"),
        ((pure_dp(1.0), [2.0], [0.1], 0.0), "alpha"),
        ((pure_dp(1.0), [2.0], [0.1], 1.0), "alpha"),
    ],
)
def test_check_claim_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        check_claim(*args)


# --------------------------------------------------------------------------------------------
# Mechanism.claim.


def _noisy_sum(key, x, n):
    return jnp.sum(x) + 2.0 * jax.random.normal(key, (n,))


def test_mechanism_claims():
    assert RandomizedResponse(1.5).claim == pure_dp(1.5)
    assert from_sampler(_noisy_sum).claim is None
    assert from_sampler(_noisy_sum, epsilon=1.0).claim == pure_dp(1.0)
    mech = from_sampler(_noisy_sum, claim=zcdp(1 / 8))
    assert mech.claim == zcdp(1 / 8) and mech.epsilon is None
    assert from_sampler(_noisy_sum, claim=pure_dp(2.0)).epsilon == 2.0
    x, _ = mech.reference_pair()
    assert mech.sample(jax.random.key(0), x, 3).shape == (3,)  # the claim is static metadata
    with pytest.raises(ValueError, match="not both"):
        from_sampler(_noisy_sum, epsilon=1.0, claim=pure_dp(1.0))
    with pytest.raises(ValueError, match=r"pure_dp\(0.5\)"):
        from_sampler(_noisy_sum, claim=0.5)


# --------------------------------------------------------------------------------------------
# Tabulated claims: which orders an audit bounds (issue 47).

# Opacus' RDPAccountant.DEFAULT_ALPHAS: 1.1, …, 10.9 and 12, …, 63.
OPACUS_ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)), float)


def test_tabulated_claims_are_checked_on_the_claim_grid():
    from rdpjax.claims.orders import (
        CLAIM_ORDERS,
        SMALL_N,
        SMALL_N_CLAIM_ORDERS,
        default_orders,
        tabulated_claim_orders,
    )

    assert OPACUS_ORDERS.size == 151
    table = rdp(0.05 * OPACUS_ORDERS, orders=OPACUS_ORDERS)
    np.testing.assert_array_equal(default_orders(table, SMALL_N), CLAIM_ORDERS)
    np.testing.assert_array_equal(default_orders(table, SMALL_N - 1), SMALL_N_CLAIM_ORDERS)
    np.testing.assert_array_equal(default_orders(table), CLAIM_ORDERS)  # n unknown: large
    # The grid is cut at the table's largest order, which is added when inside the grid's range.
    np.testing.assert_array_equal(default_orders(rdp({2: 0.1, 8: 0.3})), [1.5, 2, 3, 5, 7, 8])
    np.testing.assert_array_equal(default_orders(rdp({2: 0.1, 40: 1.0})), CLAIM_ORDERS)
    np.testing.assert_array_equal(default_orders(rdp({3: 0.1}), 100), [1.5, 2, 3])
    np.testing.assert_array_equal(default_orders(rdp({8: 0.1}), 100), SMALL_N_CLAIM_ORDERS)
    np.testing.assert_array_equal(default_orders(rdp({1.2: 0.1, 1.3: 0.2})), [1.2, 1.3])
    np.testing.assert_array_equal(tabulated_claim_orders([30.0], CLAIM_ORDERS), CLAIM_ORDERS)
    # What each grid order is compared with: the smallest tabulated value at an order ≥ it.
    np.testing.assert_allclose(table(CLAIM_ORDERS), 0.05 * np.asarray(CLAIM_ORDERS))
    np.testing.assert_array_equal(
        rdp({2: 0.3, 4: 0.2, 8: 0.7})([1.5, 3, 5, 9]), [0.2, 0.2, 0.7, np.inf]
    )


def test_true_tabulated_claim_survives_and_a_false_one_is_refuted():
    """Gaussian b = √10 (D_λ = λ/20): its exact curve at Opacus' 151 orders, and 0.3 of it."""
    from rdpjax.auditing import audit
    from rdpjax.claims.orders import CLAIM_ORDERS
    from rdpjax.mechanisms import Gaussian

    mech = Gaussian(10.0**0.5)
    x, xp = mech.reference_pair()
    exact = OPACUS_ORDERS / 20.0
    np.testing.assert_allclose([mech.divergence(o, x, xp) for o in (2.0, 63.0)], [0.1, 3.15])
    true, false = rdp(exact, orders=OPACUS_ORDERS), rdp(0.3 * exact, orders=OPACUS_ORDERS)
    key = jax.random.key(47)
    kept = audit(key, mech, x, xp, n=10**4, claim=true)
    assert not kept.is_refuted
    np.testing.assert_array_equal(kept.lam, CLAIM_ORDERS)
    # 9 orders × 2 directions × 2 families (Gaussian outputs are mapped by default and their own
    # KDE is bounded beside the map): 36, not 604.
    assert kept.bound.n_bounds == 36
    np.testing.assert_allclose(kept.claimed, np.asarray(CLAIM_ORDERS) / 20.0)
    refuted = audit(key, mech, x, xp, n=10**4, claim=false)
    assert refuted.is_refuted and refuted.verdict().startswith("REFUTED")
    np.testing.assert_allclose(refuted.claimed, 0.3 * np.asarray(CLAIM_ORDERS) / 20.0)
    # An explicit lam= is kept: the table's own orders give 302 bounds a family, as before.
    own = audit(key, mech, x, xp, OPACUS_ORDERS, n=10**4, claim=false)
    assert own.lam.size == 151 and own.bound.n_bounds == 2 * 302 and own.is_refuted


def test_a_scalar_order_gives_a_scalar_claim():
    """Issue 52: claim(2.0) is a number, claim([2.0]) an array of one, shapes kept."""
    for claim in (pure_dp(1.0), zcdp(0.5), gdp(1.0)):
        assert np.ndim(claim(2.0)) == 0 and isinstance(claim(2.0), np.float64)
        assert claim([2.0]).shape == (1,) and claim(np.full((2, 3), 4.0)).shape == (2, 3)
        assert claim(2.0) == claim([2.0])[0]
