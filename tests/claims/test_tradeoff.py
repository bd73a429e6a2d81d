"""Trade-off functions and hockey-stick curves against independent references.

References: dp_accounting's privacy-loss distribution of the Gaussian mechanism (δ(ε) of
N(0,1) vs N(μ,1)), the Neyman–Pearson test of N(μ,1) vs N(0,1) from scipy's normal law, and the
hockey-stick sum of the four-point (ε, δ) law written out from its definition.
"""

import math

import numpy as np
import pytest
from scipy import stats

from rdpjax.claims import approx_dp, gdp, hockey_stick, max_power, pure_dp, rdp, tradeoff, zcdp


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0])
def test_gdp_hockey_stick_matches_dp_accounting(mu):
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    dist = pld.from_gaussian_mechanism(
        standard_deviation=1.0, sensitivity=mu, value_discretization_interval=1e-5
    )
    for eps in [0.0, 0.5, 1.0, 3.0]:
        want = dist.get_delta_for_epsilon(eps)
        # PLD discretization is pessimistic by about the interval: a relative tolerance.
        assert float(hockey_stick(gdp(mu), eps)) == pytest.approx(want, rel=1e-3, abs=1e-9)


def test_gaussian_mu1_at_1e5_is_epsilon_4_38():
    # The reference point: N(0,1) vs N(1,1) is (4.38, 1e-5)-DP and no better.
    assert float(hockey_stick(gdp(1.0), 4.38)) == pytest.approx(1e-5, rel=0.02)


@pytest.mark.parametrize("a", [1e-6, 0.01, 0.05, 0.3, 0.9])
def test_gdp_tradeoff_is_the_neyman_pearson_test(a):
    mu = 1.3
    t = stats.norm.isf(a)  # reject x' = N(0,1) above t: type I error a
    beta = stats.norm.cdf(t - mu)  # type II error under N(μ,1)
    assert float(tradeoff(gdp(mu), a)) == pytest.approx(beta, rel=1e-10)
    assert float(max_power(gdp(mu), a)) == pytest.approx(1 - beta, rel=1e-10)


def _four_point(eps, delta):
    e = math.exp(eps)
    p = np.array([delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0.0])
    return p, p[::-1].copy()


@pytest.mark.parametrize("eps0, delta", [(1.0, 0.0), (1.0, 1e-5), (0.1, 0.2), (5.0, 0.01)])
def test_eps_delta_hockey_stick_is_the_four_point_law(eps0, delta):
    p, q = _four_point(eps0, delta)
    claim = approx_dp(eps0, delta) if delta else pure_dp(eps0)
    for eps in [0.0, eps0 / 3, eps0, eps0 + 1]:
        want = np.maximum(p - math.exp(eps) * q, 0).sum()
        assert float(hockey_stick(claim, eps)) == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("eps0, delta", [(1.0, 0.0), (0.5, 1e-3)])
def test_eps_delta_tradeoff_is_the_four_point_law(eps0, delta):
    # Every set of the four-point law: its (Q(S), 1 − P(S)) lies on or above f.
    p, q = _four_point(eps0, delta)
    claim = approx_dp(eps0, delta)
    for mask in range(16):
        s = np.array([(mask >> i) & 1 for i in range(4)], bool)
        a, b = q[s].sum(), 1 - p[s].sum()
        assert b >= float(tradeoff(claim, a)) - 1e-12
    # and f is attained at the corner a = Q({0, 1}).
    a = q[:2].sum()
    assert float(tradeoff(claim, a)) == pytest.approx(1 - p[:2].sum(), abs=1e-12)


def test_approx_dp_claim_curve_is_infinite():
    c = approx_dp(2.0, 1e-6)
    assert c.kind == "approx_dp" and np.all(np.isinf(c([1.5, 2, 64])))
    assert c.to_dict()["params"] == {"epsilon": 2.0, "delta": 1e-6}


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: approx_dp(-1.0, 1e-5), "epsilon"),
        (lambda: approx_dp(1.0, 1.0), "delta"),
        (lambda: approx_dp(1.0, -1e-9), "delta"),
        (lambda: approx_dp(1.0, math.nan), "delta"),
        (lambda: tradeoff(zcdp(0.5), 0.1), "trade-off"),
        (lambda: hockey_stick(rdp({2: 1.0}), 1.0), "trade-off"),
        (lambda: tradeoff(gdp(1.0), 1.5), r"\[0, 1\]"),
        (lambda: hockey_stick(gdp(1.0), -1.0), "epsilon"),
    ],
)
def test_bad_arguments(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_gdp_extremes_are_finite():
    assert float(hockey_stick(gdp(1.0), 1e4)) == 0.0
    assert float(hockey_stick(gdp(0.0), 0.0)) == 0.0
    assert tradeoff(gdp(2.0), [0.0, 1.0]).tolist() == [1.0, 0.0]
