"""rdpjax.studies.coverage: vmapped replications on a mechanism with a known truth."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

import rdpjax
import rdpjax._precision
import rdpjax.studies
from rdpjax.studies import coverage, format_coverage, wilson_interval


@pytest.mark.parametrize(("k", "n"), [(0, 20), (19, 20), (190, 200), (200, 200)])
def test_wilson_interval_matches_statsmodels(k, n):
    np.testing.assert_allclose(
        wilson_interval(k, n), proportion_confint(k, n, method="wilson"), rtol=1e-6
    )


@pytest.mark.slow
def test_coverage_study_gaussian_and_randomized_response():
    """100 replications at n = 5000: if the true coverage were 0.95, P(≤ 88/100) = 0.6%."""
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    for mech in (rdpjax.mechanisms.Gaussian(5.0), rdpjax.mechanisms.RandomizedResponse(1.5)):
        r = coverage(jax.random.key(0), mech, x, xp, [2, 7], n=5000, reps=100)
        assert r.lower.shape == (100, 2)
        np.testing.assert_allclose(r.exact, [mech.divergence(lam, x, xp) for lam in (2, 7)])
        assert np.all(r.coverage >= 0.88), r.coverage
        assert np.all(r.coverage_low <= r.coverage) and np.all(r.coverage <= r.coverage_high)
        np.testing.assert_allclose(r.tightness, (r.lower / r.exact).mean(0))
        _check_summary(r)


@pytest.mark.slow
def test_coverage_with_another_key_gives_other_bounds_of_the_same_shape():
    """A second study with another key (and, for randomized response, another ε: its support
    is fixed) gives other bounds of the same shape. (That it compiles nothing new, jit(_draws)
    and jit(_bounds) reused, for the Gaussian because under the bucketed layout the pilots of keys
    1 and 2 land on one grid: benchmarks/performance/compiled_programs.py.)"""
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    cases = [
        (rdpjax.mechanisms.RandomizedResponse(1.5), rdpjax.mechanisms.RandomizedResponse(1.0), {}),
        (rdpjax.mechanisms.Gaussian(5.0), rdpjax.mechanisms.Gaussian(5.0), {"layout": "bucketed"}),
    ]
    for mech, other, options in cases:
        study = functools.partial(coverage, x=x, x_prime=xp, lam=[2], n=500, reps=4, **options)
        first = study(jax.random.key(1), mech)
        second = study(jax.random.key(2), other)
        assert first.lower.shape == second.lower.shape == (4, 1)
        assert not np.array_equal(first.lower, second.lower)


@pytest.mark.slow
def test_a_subsampled_gaussians_pilot_plans_the_gaussians_layout():
    """The bounds of a study are compiled apart from its draws, so that a Poisson-subsampled
    Gaussian study whose pilot plans the same layout as a Gaussian study's (checked here on the
    pilots themselves: a 768-point grid for both) can bound with the Gaussian's program; the two
    studies' bounds differ. (That it does, jit(_bounds) reused and jit(_draws) compiled anew:
    benchmarks/performance/compiled_programs.py.)"""
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    key, n = jax.random.key(1), 700
    g = rdpjax.mechanisms.Gaussian(5.0)
    mechs = (g, rdpjax.mechanisms.PoissonSubsampled(g, 0.5))
    plans = []
    for mech in mechs:  # the pilot as coverage draws it: key fold_in(key, 2^31 − 1)
        kp, kq = jax.random.split(jax.random.fold_in(key, 2**31 - 1))
        with rdpjax._precision.float64():
            p = mech.sample(kp, jnp.asarray(x, float), n)
            q = mech.sample(kq, jnp.asarray(xp, float), n)
            plans.append(rdpjax.plan_bound(p, q, [2], layout="bucketed")[0])
    assert jax.tree.structure(plans[0]) == jax.tree.structure(plans[1])  # one layout
    study = functools.partial(coverage, x=x, x_prime=xp, lam=[2], n=n, reps=3, key=key)
    gaussian, subsampled = (study(mechanism=m, layout="bucketed") for m in mechs)
    assert gaussian.lower.shape == subsampled.lower.shape == (3, 1)
    assert not np.array_equal(gaussian.lower, subsampled.lower)


@pytest.mark.slow
def test_chunked_study_equals_one_call():
    """Drawn and bounded in chunks of replications (a small STUDY_CHUNK_SAMPLES), a study
    returns exactly what one call returns: each replication's key is fixed (one replication a
    batch, so that a chunk can hold as few as three). (That the chunks really ran, jit(_draws)
    compiled for the new chunk size: benchmarks/performance/compiled_programs.py.)"""
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    mech = rdpjax.mechanisms.Laplace(2.0)
    study = functools.partial(
        coverage, jax.random.key(4), mech, x, xp, [2, 5], n=600, reps=9, batch_size=1
    )
    whole = study()
    chunked = study(chunk_samples=3 * 600)
    np.testing.assert_array_equal(chunked.lower, whole.lower)
    np.testing.assert_array_equal(chunked.std_error, whole.std_error)


def _check_summary(r):
    """to_dict: counts recomputed from the replications, fractions and intervals agree."""
    d = r.to_dict()
    held = r.lower <= r.exact
    assert d["covered"] == held.sum(0).tolist() and d["n"] == 5000 and d["reps"] == 100
    np.testing.assert_allclose(d["coverage"], np.array(d["covered"]) / 100)
    for k, low, high in zip(d["covered"], d["coverage_low"], d["coverage_high"], strict=True):
        assert (low, high) == wilson_interval(k, 100)
    assert d["simultaneous_covered"] == int(held.all(1).sum()) <= min(d["covered"])
    assert d["simultaneous_low"] <= d["simultaneous"] <= d["simultaneous_high"]
    np.testing.assert_allclose(d["mean_lower"], r.lower.mean(0))
    assert "lower" not in d and len(r.to_dict(replications=True)["lower"]) == 100
    table = format_coverage([{"mechanism": "M", **d}]).splitlines()
    assert len(table) == 2 + 2 and table[2].startswith("| M | 5,000 | 100 | 2 |")
    assert table[3].count("|  |") == 1  # the simultaneous column only on the first order


def test_wilson_interval_ends_are_exact():
    assert wilson_interval(0, 7)[0] == 0.0 and wilson_interval(7, 7)[1] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(reps=0), "reps"),
        (dict(reps=True), "reps"),
        (dict(n=1), "n must be"),
        (dict(n=1e4), "n must be"),
        (dict(lam=[1.0, 2.0]), "lam"),
        (dict(batch_size=0), "batch_size"),
        (dict(devices=0), "devices must be in"),
    ],
)
def test_coverage_rejects_bad_arguments_before_any_work(kwargs, message):
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    args = dict(lam=[2.0], n=100, reps=2) | kwargs
    with pytest.raises(ValueError, match=message):
        coverage(jax.random.key(0), rdpjax.mechanisms.Gaussian(5.0), x, xp, **args)


def test_coverage_needs_a_known_truth():
    mech = rdpjax.mechanisms.from_sampler(lambda key, x, n: jax.random.normal(key, (n,)))
    x, xp = mech.reference_pair()
    with pytest.raises(ValueError, match="exact divergence"):
        coverage(jax.random.key(0), mech, x, xp, 2.0, n=100, reps=2)


@pytest.mark.slow
def test_large_grids_are_bounded_in_smaller_batches():
    """With few grid points allowed per batch (grid_points), the bounds run one
    replication a batch and agree with the default batches (to rounding: a batch is a vmap).
    (That only the bounds compile anew, jit(_bounds) and not jit(_draws):
    benchmarks/performance/compiled_programs.py.)"""
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    study = functools.partial(
        coverage, jax.random.key(5), rdpjax.mechanisms.Gaussian(4.0), x, xp, [2], n=800, reps=6
    )
    whole = study()
    single = study(grid_points=1)
    np.testing.assert_allclose(single.lower, whole.lower, rtol=1e-10, atol=1e-12)
