"""Rejection-set tests: exact binomial bounds, validity on true claims, power, the stream, errors.

References are independent of the code under test: scipy's ``binomtest`` exact interval, the
closed-form hockey-stick δ(ε) of N(1,1) vs N(0,1) (through dp_accounting in
``tests/claims/test_tradeoff.py``), and direct counting of the draws.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from rdpjax._precision import float64
from rdpjax.claims import approx_dp, gdp, hockey_stick, pure_dp, zcdp
from rdpjax.rejection import SetOptions, clopper_pearson, set_test
from rdpjax.rejection.streamed import streamed_set_test
from rdpjax.stream import BlackBox, JaxSamplers

KEY = jax.random.key(0)


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (57, 750_000), (500, 1000)])
def test_clopper_pearson_is_scipys_exact_interval(k, n):
    lo, hi = clopper_pearson(k, n, 0.025)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert float(lo) == pytest.approx(ci.low, rel=1e-9, abs=1e-15)
    assert float(hi) == pytest.approx(ci.high, rel=1e-9)


def test_clopper_pearson_refuses_bad_counts():
    for k, n, a in [(-1, 10, 0.05), (11, 10, 0.05), (1.5, 10, 0.05), (1, 10, 1.0)]:
        with pytest.raises(ValueError):
            clopper_pearson(k, n, a)


def _gaussian(rng, n, shift=1.0):
    return rng.normal(shift, 1.0, n), rng.normal(0.0, 1.0, n)


def test_true_claims_are_rarely_refuted():
    # Tight true claims of N(1,1) vs N(0,1): 1-GDP, and (ε, δ) on its hockey-stick curve. At
    # α = 0.05 each is refuted with probability ≤ 0.05; 100 replications refute ≤ 12 (binomial
    # tail at p = 0.05: P(X > 12) < 0.001).
    eps = 1.0
    claims = [gdp(1.0), approx_dp(eps, float(hockey_stick(gdp(1.0), eps))), approx_dp(4.38, 1e-5)]
    rng = np.random.default_rng(7)
    refuted = np.zeros(len(claims), int)
    for _ in range(100):
        p, q = _gaussian(rng, 4000)
        for i, c in enumerate(claims):
            refuted[i] += set_test(KEY, p, q, c).refuted
    assert np.all(refuted <= 12), refuted


def test_bounds_lie_below_the_truth_and_false_claims_are_refuted():
    rng = np.random.default_rng(3)
    p, q = _gaussian(rng, 200_000)
    r = set_test(KEY, p, q, approx_dp(1.0, 1e-5))
    assert r.refuted and 1.0 < r.epsilon < 4.38
    g = set_test(KEY, p, q, gdp(0.8))
    assert g.refuted and 0.8 < g.mu < 1.0
    assert "REFUTED" in g.verdict() and "μ ≥" in g.verdict()
    # certified points lie on the safe side of the truth: b ≥ G_1(a) for the true 1-GDP pair
    for a, b in g.points():
        assert b >= stats.norm.cdf(stats.norm.isf(a) - 1.0) - 1e-12


def test_pure_dp_and_discrete_outputs():
    # Randomized response at ε = 1 on codes {0, 1}: the atoms are the cells.
    rng = np.random.default_rng(0)
    keep = np.exp(1.0) / (1 + np.exp(1.0))
    p = (rng.random(50_000) < keep).astype(np.int32)
    q = (rng.random(50_000) >= keep).astype(np.int32)
    assert set_test(KEY, p, q, pure_dp(0.7)).refuted
    r = set_test(KEY, p, q, approx_dp(1.0, 0.0))
    assert not r.refuted and r.cells == 3 and 0.7 < r.epsilon <= 1.0  # (−∞, 0), {0}, {1}


def test_streamed_counts_match_the_draws():
    # The stream's per-cell counts equal the counts of the same draws made in memory.
    def sp(k, m):
        return 0.5 + jax.random.normal(k, (m,), jnp.float64)

    def sq(k, m):
        return jax.random.normal(k, (m,), jnp.float64)

    with float64():
        r = streamed_set_test(jax.random.key(1), JaxSamplers(sp, sq), gdp(0.2), n=20_000)
    assert r.streamed and r.refuted and r.n_certify == 20_000
    assert all(s.count_fav <= 20_000 and s.count_other <= 20_000 for s in r.sets)


def test_blackbox_front_door():
    def mech(rng, db, m):
        return db + rng.laplace(0.0, 1.0, m)

    r = streamed_set_test(jax.random.key(2), BlackBox(mech, 1.0, 0.0), pure_dp(0.5), n=50_000)
    assert r.refuted and 0.5 < r.epsilon <= 1.0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda p, q: set_test(KEY, p, q, zcdp(0.5)), "trade-off"),
        (lambda p, q: set_test(KEY, p, q, alpha=0.7), "alpha"),
        (lambda p, q: set_test(KEY, p[:20], q[:20]), "too few"),
        (lambda p, q: set_test(KEY, np.c_[p, p], q), "1-D"),
        (lambda p, q: set_test(KEY, np.r_[p, np.nan], q), "non-finite"),
        (lambda p, q: set_test(KEY, p, q, approx_dp(1, 1e-5), delta=1e-3), "differs"),
        (lambda p, q: set_test(KEY, p, q, selection=1.5), "selection"),
        (lambda p, q: SetOptions(cells=1), "cells"),
    ],
)
def test_errors(call, match):
    p, q = _gaussian(np.random.default_rng(0), 100)
    with pytest.raises(ValueError, match=match):
        call(p, q)


def test_unknown_option_is_a_type_error():
    p, q = _gaussian(np.random.default_rng(0), 100)
    with pytest.raises(TypeError, match="SetOptions"):
        set_test(KEY, p, q, bins=3)
    with pytest.raises(TypeError, match="SetOptions; got dict"):
        set_test(KEY, p, q, options={"selection": 0.1})


@pytest.mark.parametrize("delta, name", [(0.0, "ε"), (1e-5, "ε(δ = 1e-05)")])
@pytest.mark.parametrize("epsilon", [-4e-4, 0.0, -np.inf])
def test_a_certified_epsilon_of_at_most_zero_is_worded_as_nothing_certified(delta, name, epsilon):
    # A constant mechanism's pooled guess certifies logit(θ_lo) < 0: true, but "ε ≥ -0.0004"
    # says less than ε ≥ 0 does; it reads as the μ does ("no μ > 0 certified").
    from rdpjax.rejection.result import SetTest

    claim = pure_dp(0.5) if delta == 0 else approx_dp(0.5, delta)
    result = SetTest(claim, 0.05, delta, epsilon, -np.inf, False, (), 10, 10, 2)
    facts = result.facts()
    assert facts == f"no {name} > 0 certified"
    positive = SetTest(claim, 0.05, delta, 0.25, -np.inf, False, (), 10, 10, 2).facts()
    assert positive.endswith("≥ 0.25, not above the claimed 0.5")
