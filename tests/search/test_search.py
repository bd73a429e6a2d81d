"""Tests of :mod:`rdpjax.search`: the worst-pair search and its certification.

Two searches are run once per module with fixed keys and small sizes (a gradient search on a
clipped mean whose worst pair is known in closed form, an evolutionary search on randomized
response); the other tests reuse them or exercise cheap pieces.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import norm

import rdpjax
from rdpjax import mechanisms
from rdpjax.estimator.api import KEPT_SHARE
from rdpjax.search import (
    Budget,
    Certification,
    Pairs,
    SearchSpace,
    certify,
    find_pair,
    search_keys,
    search_objective,
    search_space,
)

CLIP = 1.0
NOISE = 1.0
SPACE = SearchSpace(m=4, low=-2.0, high=2.0)  # the clip (±1) is inside the domain (±2)
ORDERS = [2.0, 5.0]
ALPHA = 0.1


def _clipped_mean_sample(key, x, n):
    return jnp.mean(jnp.clip(x, -CLIP, CLIP)) + NOISE * jax.random.normal(key, (n,))


CLIPPED_MEAN = mechanisms.from_sampler(_clipped_mean_sample, name="clipped mean")


@pytest.fixture(scope="module")
def clipped_run():
    return find_pair(
        jax.random.key(0),
        CLIPPED_MEAN,
        ORDERS,
        pairs=Pairs(space=SPACE),
        budget=Budget(steps=40, restarts=2, search_n=1024),
        certification=Certification(n=4000, alpha=ALPHA),
    )


@pytest.fixture(scope="module")
def discrete_run():
    return find_pair(
        jax.random.key(1),
        mechanisms.RandomizedResponse(1.0),
        2.0,
        pairs=Pairs(m=3),
        budget=Budget(steps=6, restarts=2, population=4, search_n=512),
        certification=Certification(n=4000, both_directions=True),
    )


def _one_entry_differs(x, x_prime, index):
    differs = np.any(np.asarray(x) != np.asarray(x_prime), axis=tuple(range(1, np.ndim(x))))
    return np.flatnonzero(differs).tolist() == [int(index)]


@pytest.mark.slow
def test_clipped_mean_worst_pair_is_found(clipped_run):
    """Exact D_λ = λ Δ² / (2σ²) with Δ = (clip(x_j) − clip(x'_j)) / m: the worst pairs have
    the differing entry ≥ 1 on one side and ≤ −1 on the other (|Δ| = 2/m)."""
    r = clipped_run
    assert r.method == "gradient"
    exact = np.asarray(ORDERS) * (2.0 / SPACE.m) ** 2 / (2 * NOISE**2)
    # The gradient ascent itself gets there (not only the vertex variants of its final pairs):
    # its best objective per order is far above the quarter that pairs like (21) reach.
    assert np.all(r.trace.max(axis=(1, 2)) > 0.7 * exact)
    j = int(r.index)
    shift = np.clip(r.x[j], -CLIP, CLIP) - np.clip(r.x_prime[j], -CLIP, CLIP)
    assert abs(shift) > 1.95
    # The certified bound is below the exact value at the pair, and its estimate is above the
    # exact value of the pairs at half the shift (e.g. (21): entries 1 vs 0), a quarter of it.
    assert np.all(r.lower <= exact)
    assert np.all(r.estimate - 3 * r.std_error > exact / 4)


@pytest.mark.slow
def test_projection_keeps_the_domain(clipped_run, discrete_run):
    assert np.all((clipped_run.x >= SPACE.low) & (clipped_run.x <= SPACE.high))
    assert np.all((clipped_run.x_prime >= SPACE.low) & (clipped_run.x_prime <= SPACE.high))
    for pair in (discrete_run.x, discrete_run.x_prime):  # levels: {0, 1}
        assert set(np.unique(pair).tolist()) <= {0.0, 1.0}


@pytest.mark.slow
def test_adjacency(clipped_run, discrete_run):
    for r in (clipped_run, discrete_run):
        assert _one_entry_differs(r.x, r.x_prime, r.index)
        assert r.neighbours == "replace-one" and "neighbours: replace-one" in str(r)


@pytest.mark.slow
def test_bonferroni_level(clipped_run, discrete_run):
    """Each certified bound is at level α/K, K = orders × directions, and equals
    estimate − bias + Φ⁻¹(α/K)·se; where the default maps the outputs, the map's family and the
    outputs' own KDE share α/K, 0.9 / 0.1 (rdpjax.estimator.api.either_bound), and each order's
    bound is one of the two."""
    for r, k, alpha in ((clipped_run, len(ORDERS), ALPHA), (discrete_run, 2, 0.05)):
        levels = np.array([1.0, 1 - KEPT_SHARE, KEPT_SHARE]) * alpha / k
        assert np.any(np.isclose(float(r.level), levels, rtol=1e-9))
        candidates = [r.estimate - r.bias + norm.ppf(level) * r.std_error for level in levels]
        close = [np.isclose(r.lower, c, rtol=1e-10, atol=1e-12) for c in candidates]
        assert np.all(np.any(close, axis=0)), (r.lower, candidates)


@pytest.mark.slow
def test_certification_uses_fresh_draws(clipped_run):
    """The certified estimate is the bound on draws from the certification key (as documented
    in SearchKeys), and those draws share no value with any search or selection draw."""
    r = clipped_run
    keys = search_keys(jax.random.key(0))
    kp, kq = jax.random.split(keys.certify)
    with rdpjax.float64():
        x, x_prime = jnp.asarray(r.x), jnp.asarray(r.x_prime)
        p = np.asarray(CLIPPED_MEAN.sample(kp, x, r.n))
        q = np.asarray(CLIPPED_MEAN.sample(kq, x_prime, r.n))
        used = [jax.random.split(keys.search, r.restarts + 1)[i] for i in range(r.restarts)]
        used.append(keys.select)
        seen = np.concatenate([np.asarray(CLIPPED_MEAN.sample(k, x, r.search_n)) for k in used])
    again = rdpjax.lower_bound(p, q, ORDERS, alpha=ALPHA, discrete=False)
    np.testing.assert_allclose(again.estimate, r.estimate, rtol=1e-12)
    assert np.intersect1d(p, seen).size == 0 and np.intersect1d(q, seen).size == 0
    certify_data = np.asarray(jax.random.key_data(keys.certify))
    for k in (keys.init, keys.search, keys.select):
        assert not np.array_equal(np.asarray(jax.random.key_data(k)), certify_data)


def test_certify_family_size_is_checked():
    mech = mechanisms.RandomizedResponse(1.0)
    x, x_prime = jnp.array([1.0, 0.0]), jnp.array([0.0, 0.0])
    with pytest.raises(ValueError, match="family_size"):
        certify(jax.random.key(3), mech, x, x_prime, [2.0, 3.0], n=100, family_size=1)


def test_gradient_matches_finite_differences():
    """Autodiff gradient of the search objective vs central differences in every entry of x
    and x' (the objective is piecewise smooth: linear binning, FFT smoothing, log-space sums)."""
    space = SearchSpace(m=3, low=-2.0, high=2.0)
    with rdpjax.float64():
        f = search_objective(jax.random.key(4), CLIPPED_MEAN, 3.0, n=512, space=space)
        f_and_grad = jax.jit(jax.value_and_grad(f, argnums=(0, 1)))  # one compilation for all
        x = jnp.array([0.3, -0.2, 0.5])
        x_prime = x.at[0].set(-0.6)
        _, (gx, gxp) = f_and_grad(x, x_prime)
        eps = 1e-5
        fd = []
        for arg in (0, 1):
            for i in range(space.m):
                e = jnp.zeros(space.m).at[i].set(eps)
                plus = (x + e, x_prime) if arg == 0 else (x, x_prime + e)
                minus = (x - e, x_prime) if arg == 0 else (x, x_prime - e)
                fd.append((f_and_grad(*plus)[0] - f_and_grad(*minus)[0]) / (2 * eps))
        auto = np.concatenate([np.asarray(gx), np.asarray(gxp)])
    assert np.max(np.abs(auto)) > 1e-3  # a real signal, not two zeros
    np.testing.assert_allclose(auto, np.asarray(fd), rtol=1e-4, atol=1e-6 * np.max(np.abs(auto)))


@pytest.mark.slow
def test_discrete_mechanisms_use_the_evolutionary_search(discrete_run):
    r = discrete_run
    assert r.method == "evolutionary"
    assert "discrete" in r.reason
    assert r.trace.shape == (1, 2, 6)
    assert np.all(np.diff(r.trace, axis=-1) >= 0)  # (1+P)-ES: the incumbent never gets worse
    with pytest.raises(ValueError, match="gradient"):
        find_pair(
            jax.random.key(1),
            mechanisms.RandomizedResponse(1.0),
            2.0,
            pairs=Pairs(m=3),
            budget=Budget(method="gradient", steps=2, restarts=1),
            certification=Certification(n=100),
        )


def test_search_space_and_validation():
    assert search_space(mechanisms.Gaussian(5.0)) == SearchSpace(m=10)
    assert search_space(mechanisms.RandomizedResponse(1.5)).levels == 2
    assert search_space(mechanisms.KaryRandomizedResponse(1.0, 5)) == SearchSpace(
        m=1, low=0.0, high=4.0, levels=5
    )
    with pytest.raises(ValueError, match="adjacency"):
        search_space(mechanisms.ReportNoisyMax(1.0))
    gauss = mechanisms.Gaussian(5.0)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="lam"):
        find_pair(key, gauss, 1.0, certification=Certification(n=100))
    # The option objects check their fields when they are made.
    for make, kwargs, match in (
        (Budget, {"steps": 0}, "steps"),
        (Budget, {"restarts": 0}, "restarts"),
        (Budget, {"population": 0}, "population"),
        (Budget, {"search_n": 1}, "search_n"),
        (Budget, {"select_n": 1}, "select_n"),
        (Budget, {"method": "newton"}, "method"),
        (Budget, {"steps": 2.5}, "steps must be"),
        (Certification, {"alpha": 0.7}, "alpha"),
        (Certification, {"n": 1}, "n must be"),
        (Certification, {"both_directions": "yes"}, "both_directions"),
        (Pairs, {"domain": (1.0, 0.0)}, "domain"),
        (Pairs, {"m": 0}, "m must be"),
        (Pairs, {"levels": 1}, "levels must be"),
        (Pairs, {"space": (0.0, 1.0)}, "SearchSpace"),
        (Pairs, {"neighbours": "swap"}, "neighbours must be one of"),
    ):
        with pytest.raises(ValueError, match=match):
            make(**kwargs)
    with pytest.raises(ValueError, match="budget must be a Budget"):
        find_pair(key, gauss, 2.0, budget={"steps": 2})
    with pytest.raises(ValueError, match="method must be one of"):
        find_pair(key, gauss, 2.0, budget=Budget(method="tpe"))


def test_options_defaults_are_the_former_keyword_defaults():
    """The defaults of the option objects (and of the defaults they leave to find_pair) are
    those of find_pair's keywords before they were grouped."""
    assert Pairs() == Pairs(m=None, domain=None, levels=None, space=None, neighbours=None)
    assert Budget() == Budget(
        method="auto", steps=100, restarts=None, trials=200, top=3, population=8
    )
    assert (Budget().search_n, Budget().select_n, Budget().optimizer) == (None, None, None)
    assert Certification() == Certification(n=100_000, alpha=0.05, both_directions=False)
    assert Pairs(domain=[0, 2]).domain == (0.0, 2.0)  # a hashable pair of floats


def _search_parser():
    from rdpjax.cli import build_parser

    return build_parser()  # `rdpjax search` is wired into the real command line


def test_search_command_parses_and_rejects_bad_input():
    from rdpjax.cli import CliError
    from rdpjax.cli.search import run as run_search_command

    parser = _search_parser()
    args = parser.parse_args(
        [
            "search",
            "gaussian",
            "--param",
            "scale=2",
            "--lam",
            "2",
            "5",
            "--steps",
            "10",
            "--n",
            "1e4",
        ]
    )
    assert args.func is run_search_command
    assert (args.mechanism, args.param, args.lam) == ("gaussian", ["scale=2"], [2.0, 5.0])
    # --restarts unset: find_pair's default (8 for a JAX mechanism, 4 for a numpy black box)
    assert (args.steps, args.restarts, args.n, args.seed, args.json) == (10, None, 10_000, 0, False)
    with pytest.raises(SystemExit):
        parser.parse_args(["search", "gaussian", "--lam", "1"])  # λ must be > 1
    for argv, match in (
        (["search", "no-such-mechanism"], "unknown mechanism"),
        (["search", "gaussian", "--param", "width=2"], "unknown parameter"),
        (["search", "report-noisy-max"], "adjacency"),
    ):
        with pytest.raises(CliError, match=match):
            run_search_command(parser.parse_args(argv))
