"""Laplace and Gaussian mechanisms of paper 000: exact divergences and samplers."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from autodp import rdp_bank
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from scipy import integrate, stats
from zoo_testing import assert_ks, draw, key

from rdpjax.mechanisms import Gaussian, Laplace
from rdpjax.mechanisms.databases import paper_pair

ORDERS = (2, 5, 7)
# docs/methods.md §3, reference values (b = 5, pair (21)).
TABLE = {"laplace": (0.037015, 0.084103, 0.107113), "gaussian": (0.04, 0.10, 0.14)}


@pytest.mark.parametrize("lam, ref", list(zip(ORDERS, TABLE["laplace"], strict=True)))
def test_laplace_matches_table(lam, ref):
    x, xp = paper_pair()
    assert abs(Laplace(5.0).divergence(lam, x, xp) - ref) <= 5e-7


@pytest.mark.parametrize("lam, ref", list(zip(ORDERS, TABLE["gaussian"], strict=True)))
def test_gaussian_matches_table(lam, ref):
    x, xp = paper_pair()
    assert Gaussian(5.0).divergence(lam, x, xp) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("lam", [1.5, 2, 3.7, 5, 7, 32])
@pytest.mark.parametrize("scale", [0.5, 1.0, 5.0])
def test_laplace_against_dp_accounting_and_autodp(lam, scale):
    x, xp = paper_pair()
    ours = Laplace(scale).divergence(lam, x, xp)
    assert ours == pytest.approx(rdp._laplace_rdp(1.0 / scale, lam), rel=1e-10)
    assert ours == pytest.approx(rdp_bank.RDP_laplace({"b": scale}, lam), rel=1e-10)


@pytest.mark.parametrize("lam", [1.5, 2, 5, 7.5])
def test_gaussian_against_autodp(lam):
    x, xp = paper_pair()
    ours = Gaussian(2.0).divergence(lam, x, xp)
    assert ours == pytest.approx(rdp_bank.RDP_gaussian({"sigma": 2.0}, lam), rel=1e-12)


@pytest.mark.parametrize("lam", [1.3, 2.5, 6.0])
def test_laplace_against_quadrature_both_directions(lam):
    x, xp = paper_pair()
    b = 1.5
    p = stats.laplace(loc=1.0, scale=b).pdf
    q = stats.laplace(loc=0.0, scale=b).pdf
    for f, g, pair in ((p, q, (x, xp)), (q, p, (xp, x))):
        value, _ = integrate.quad(
            lambda t, f=f, g=g: f(t) ** lam * g(t) ** (1 - lam), -60, 60, points=[0, 1], limit=200
        )
        assert Laplace(b).divergence(lam, *pair) == pytest.approx(
            math.log(value) / (lam - 1), rel=1e-9
        )


def test_vector_statistic_divergences():
    x, xp = paper_pair(dim=2)
    assert Gaussian(5.0).divergence(3, x, xp) == pytest.approx(3 * 2 / (2 * 25))
    # Independent coordinates: D_λ adds up.
    assert Laplace(5.0).divergence(3, x, xp) == pytest.approx(
        2 * Laplace(5.0).divergence(3, *paper_pair())
    )
    assert Laplace(5.0).divergence(math.inf, x, xp) == pytest.approx(2 / 5)
    assert Gaussian(5.0).divergence(math.inf, x, xp) == math.inf


def test_divergence_nonnegative_and_monotone():
    x, xp = paper_pair()
    for mech in (Laplace(2.0), Gaussian(2.0)):
        values = [mech.divergence(lam, x, xp) for lam in (1.01, 1.5, 2, 5, 10, math.inf)]
        assert values[0] >= 0 and all(a <= b for a, b in zip(values, values[1:], strict=False))
        assert mech.divergence(2, x, x) == 0.0


def test_laplace_sampler_ks():
    x, _ = paper_pair()
    samples = draw(Laplace(5.0), 0, x)
    assert samples.shape == (50_000,) and samples.dtype == jnp.float32
    assert_ks(samples, stats.laplace(loc=1.0, scale=5.0).cdf)


def test_gaussian_sampler_ks_scalar_and_vector():
    x, _ = paper_pair()
    assert_ks(draw(Gaussian(5.0), 1, x), stats.norm(loc=1.0, scale=5.0).cdf)
    x2, _ = paper_pair(dim=2)
    vec = draw(Gaussian(2.0), 2, x2)
    assert vec.shape == (50_000, 2)
    assert_ks(vec[:, 0], stats.norm(loc=1.0, scale=2.0).cdf)
    # A projection of two independent N(1, 4) coordinates is N(0, 8) after centring.
    assert_ks(vec[:, 0] - vec[:, 1], stats.norm(loc=0.0, scale=2.0 * math.sqrt(2.0)).cdf)


@pytest.mark.parametrize("cls", [Laplace, Gaussian])
def test_grad_over_scale(cls):
    """Reparameterized: d/db Σ (S + b Y) = Σ Y = Σ (samples − S) / b."""
    x, _ = paper_pair()
    grad = jax.jit(jax.grad(lambda s: jnp.sum(cls(s).sample(key(5), x, 1000))))(2.0)
    noise = (cls(2.0).sample(key(5), x, 1000) - 1.0) / 2.0
    assert float(grad) == pytest.approx(float(jnp.sum(noise)), rel=1e-4, abs=1e-3)


def test_epsilon():
    assert Laplace(4.0).epsilon == 0.25
    assert Gaussian(4.0).epsilon is None
    np.testing.assert_allclose(Laplace(jnp.array([1.0, 2.0])).epsilon, [1.0, 0.5])
