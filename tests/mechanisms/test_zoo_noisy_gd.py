"""Noisy gradient descent (paper 000): exact Gaussian law of θ_K and the sampler."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from zoo_testing import assert_ks, draw, key

from rdpjax.mechanisms import NoisyGradientDescent
from rdpjax.mechanisms.databases import paper_pair
from rdpjax.mechanisms.noisy_gd import paper_closed_form

TABLE = (0.0072547, 0.0181367, 0.0253913)  # docs/methods.md §3: η = 0.2, b = 1, K = 10, m = 10


def _law_by_recursion(x_bar, eta, b, steps):
    """Mean and variance of θ_K by iterating the update's moments (independent of the code)."""
    mean, var = 0.0, 0.0
    for _ in range(steps):
        mean = (1 - eta) * mean + eta * x_bar
        var = (1 - eta) ** 2 * var + 2 * eta * b * b
    return mean, var


def test_matches_table_and_paper_formula():
    x, xp = paper_pair()
    mech = NoisyGradientDescent(0.2, 1.0, 10)
    for lam, ref in zip((2, 5, 7), TABLE, strict=True):
        value = mech.divergence(lam, x, xp)
        assert abs(value - ref) <= 5e-8
        assert value == pytest.approx(paper_closed_form(lam, 0.2, 1.0, 10, 10), rel=1e-12)


@pytest.mark.parametrize("eta, b, steps", [(0.2, 1.0, 10), (0.7, 0.3, 3), (1.5, 2.0, 25)])
def test_divergence_against_moment_recursion(eta, b, steps):
    x = np.array([0.3, 0.9, 0.1, 0.5])  # float64: exact divergences are host-side
    xp = np.array([0.3, 0.2, 0.1, 0.5])
    mean_p, var = _law_by_recursion(0.45, eta, b, steps)
    mean_q, _ = _law_by_recursion(0.275, eta, b, steps)
    mech = NoisyGradientDescent(eta, b, steps)
    assert mech.divergence(3.5, x, xp) == pytest.approx(
        3.5 * (mean_p - mean_q) ** 2 / (2 * var), rel=1e-8
    )
    assert mech.divergence(math.inf, x, xp) == math.inf


def test_sampler_ks():
    x, _ = paper_pair()
    mean, var = _law_by_recursion(0.1, 0.2, 1.0, 10)
    samples = draw(NoisyGradientDescent(0.2, 1.0, 10), 30, x)
    assert samples.shape == (50_000,)
    assert_ks(samples, stats.norm(mean, math.sqrt(var)).cdf)


def test_grad_over_noise_and_step_size():
    x, _ = paper_pair()

    def total(noise, eta):
        return jnp.sum(NoisyGradientDescent(eta, noise, 10).sample(key(31), x, 256))

    value_and_grad = jax.jit(jax.value_and_grad(total, argnums=(0, 1)))
    value, (g_noise, g_eta) = value_and_grad(1.0, 0.2)
    # θ_K is linear in b: d/db Σ θ_K = Σ (θ_K − deterministic part) / b, here with b = 1.
    drift = 0.1 * (1 - 0.8**10)
    assert float(g_noise) == pytest.approx(float(value) - 256 * drift, rel=1e-3, abs=1e-2)
    # Central difference in η (same key, so the same noise), reusing the compiled function.
    h = 1e-3
    fd = (value_and_grad(1.0, 0.2 + h)[0] - value_and_grad(1.0, 0.2 - h)[0]) / (2 * h)
    assert float(g_eta) == pytest.approx(float(fd), rel=2e-2, abs=0.5)
