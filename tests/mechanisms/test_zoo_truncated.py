"""Truncated Laplace and Gaussian mechanisms of paper 001."""

import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from scipy import stats
from zoo_testing import assert_ks, draw, key

from rdpjax.mechanisms import TruncatedGaussian, TruncatedLaplace
from rdpjax.mechanisms.truncated import paper_closed_form

mpmath.mp.dps = 30


def _mp_renyi(lam, log_p, log_q, lo, hi, points):
    """mpmath quadrature of p^λ q^{1−λ} on [lo, hi], split at the kinks."""
    edges = sorted({lo, hi, *[t for t in points if lo < t < hi]})
    value = mpmath.quad(lambda t: mpmath.exp(lam * log_p(t) + (1 - lam) * log_q(t)), edges)
    return float(mpmath.log(value) / (lam - 1))


def _trunc_laplace_logpdf(mu, b, lo=0.0, hi=1.0):
    k = 1 / (b * (2 - mpmath.exp(-(mu - lo) / b) - mpmath.exp(-(hi - mu) / b)))
    return lambda t: mpmath.log(k) - abs(t - mu) / b


def _trunc_gauss_logpdf(mu, s, lo=0.0, hi=1.0):
    z = mpmath.ncdf((hi - mu) / s) - mpmath.ncdf((lo - mu) / s)
    return lambda t: -((t - mu) ** 2) / (2 * s * s) - mpmath.log(s * z * mpmath.sqrt(2 * mpmath.pi))


@pytest.mark.parametrize("lam", [2, 5, 7, 1.7])
@pytest.mark.parametrize("scale", [0.2, 1.0, 5.0])
def test_laplace_paper_formula_and_quadrature(lam, scale):
    mech = TruncatedLaplace(scale)
    assert mech.divergence(lam, 0.0, 1.0) == pytest.approx(paper_closed_form(lam, scale), rel=1e-10)
    for mu_p, mu_q in ((0.2, 0.7), (0.9, 0.35), (0.0, 0.5)):
        oracle = _mp_renyi(
            lam,
            _trunc_laplace_logpdf(mu_p, scale),
            _trunc_laplace_logpdf(mu_q, scale),
            0.0,
            1.0,
            [mu_p, mu_q],
        )
        assert mech.divergence(lam, mu_p, mu_q) == pytest.approx(oracle, rel=1e-10)


@pytest.mark.parametrize("lam", [2, 5, 7, 2.6])
@pytest.mark.parametrize("scale", [0.1, 0.5, 2.0])
def test_gaussian_closed_form_against_quadrature(lam, scale):
    mech = TruncatedGaussian(scale)
    for mu_p, mu_q in ((0.0, 1.0), (0.3, 0.8), (1.0, 0.1)):
        oracle = _mp_renyi(
            lam,
            _trunc_gauss_logpdf(mu_p, scale),
            _trunc_gauss_logpdf(mu_q, scale),
            0.0,
            1.0,
            [],
        )
        assert mech.divergence(lam, mu_p, mu_q) == pytest.approx(oracle, rel=1e-9)


def test_other_interval():
    lo, hi = -1.0, 2.0
    for mech, logpdf in (
        (TruncatedLaplace(0.7, lo, hi), _trunc_laplace_logpdf),
        (TruncatedGaussian(0.7, lo, hi), _trunc_gauss_logpdf),
    ):
        oracle = _mp_renyi(
            3.0, logpdf(-0.5, 0.7, lo, hi), logpdf(1.5, 0.7, lo, hi), lo, hi, [-0.5, 1.5]
        )
        assert mech.divergence(3.0, -0.5, 1.5) == pytest.approx(oracle, rel=1e-9)


@pytest.mark.parametrize("cls, scale", [(TruncatedLaplace, 0.4), (TruncatedGaussian, 0.4)])
def test_epsilon_is_the_sup_over_a_grid(cls, scale):
    """The LDP level equals the largest log density ratio over a grid of locations and outputs,
    and D_∞ on the reference pair attains it."""
    mech = cls(scale)
    grid = np.linspace(0.0, 1.0, 51)
    if cls is TruncatedLaplace:
        logs = [[float(_trunc_laplace_logpdf(m, scale)(t)) for t in grid] for m in grid]
    else:
        logs = [[float(_trunc_gauss_logpdf(m, scale)(t)) for t in grid] for m in grid]
    logs = np.array(logs)
    sup = np.max(logs[:, None, :] - logs[None, :, :])
    assert sup == pytest.approx(mech.epsilon, rel=1e-9)
    assert mech.divergence(math.inf, *mech.reference_pair()) == pytest.approx(mech.epsilon)


def _trunc_laplace_cdf(mu, b):
    def cdf(t):
        t = np.clip(t, 0.0, 1.0)
        base = stats.laplace(mu, b).cdf
        return (base(t) - base(0.0)) / (base(1.0) - base(0.0))

    return cdf


@pytest.mark.parametrize("mu, scale", [(0.3, 0.5), (0.0, 0.05), (1.0, 2.0)])
def test_laplace_sampler_ks(mu, scale):
    samples = draw(TruncatedLaplace(scale), 40, mu)
    assert float(samples.min()) >= 0.0 and float(samples.max()) <= 1.0
    assert_ks(samples, _trunc_laplace_cdf(mu, scale))


@pytest.mark.parametrize("mu, scale", [(0.3, 0.5), (1.0, 0.1)])
def test_gaussian_sampler_ks(mu, scale):
    samples = draw(TruncatedGaussian(scale), 41, mu)
    law = stats.truncnorm((0.0 - mu) / scale, (1.0 - mu) / scale, loc=mu, scale=scale)
    assert_ks(samples, law.cdf)


def test_grad_over_scale():
    """Reparameterized samplers: the derivative (jvp) matches a central difference (same key)."""
    for cls in (TruncatedLaplace, TruncatedGaussian):

        def mean(s, cls=cls):
            return jnp.mean(cls(s).sample(key(42), jnp.asarray(0.3), 512))

        value_and_slope = jax.jit(lambda s, mean=mean: jax.jvp(mean, (s,), (jnp.ones_like(s),)))
        h = 1e-3
        _, slope = value_and_slope(jnp.float32(0.5))
        up, _ = value_and_slope(jnp.float32(0.5 + h))
        down, _ = value_and_slope(jnp.float32(0.5 - h))
        fd = float((up - down) / (2 * h))
        assert math.isfinite(float(slope)) and float(slope) == pytest.approx(fd, rel=5e-2, abs=5e-3)
