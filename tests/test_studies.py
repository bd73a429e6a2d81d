"""rdpjax.studies.coverage: vmapped replications on a mechanism with a known truth."""

import jax
import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

import rdpjax
from rdpjax.studies import coverage, wilson_interval


@pytest.mark.parametrize(("k", "n"), [(0, 20), (19, 20), (190, 200), (200, 200)])
def test_wilson_interval_matches_statsmodels(k, n):
    np.testing.assert_allclose(
        wilson_interval(k, n), proportion_confint(k, n, method="wilson"), rtol=1e-6
    )


def test_coverage_study_gaussian_and_randomized_response():
    """100 replications at n = 5000: if the true coverage were 0.95, P(≤ 88/100) = 0.6%."""
    x, xp = rdpjax.databases.paper_pair()
    for mech in (rdpjax.mechanisms.Gaussian(5.0), rdpjax.mechanisms.RandomizedResponse(1.5)):
        r = coverage(mech, x, xp, [2, 7], n=5000, reps=100, key=jax.random.key(0))
        assert r.lower.shape == (100, 2)
        np.testing.assert_allclose(r.exact, [mech.divergence(lam, x, xp) for lam in (2, 7)])
        assert np.all(r.coverage >= 0.88), r.coverage
        assert np.all(r.coverage_low <= r.coverage) and np.all(r.coverage <= r.coverage_high)
        np.testing.assert_allclose(r.tightness, (r.lower / r.exact).mean(0))


def test_coverage_needs_a_known_truth():
    mech = rdpjax.mechanisms.from_sampler(lambda key, x, n: jax.random.normal(key, (n,)))
    x, xp = mech.reference_pair()
    with pytest.raises(ValueError, match="exact divergence"):
        coverage(mech, x, xp, 2.0, n=100, reps=2, key=jax.random.key(0))
