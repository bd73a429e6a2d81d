"""Grid integrals against quadrature; eq. (18) against autodiff; D ≥ 0 and monotone in λ."""

import functools
import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from references import B, gaussian_exact, laplace_exact
from scipy import integrate, stats

from rdpjax.estimator.divergence import plugin_divergence, renyi_divergence, softmax_floor
from rdpjax.estimator.grid import grid_from_range
from rdpjax.estimator.kde import smooth
from rdpjax.estimator.variance import variance_autodiff, variance_eq18

T = np.linspace(-80.0, 80.0, 64001)
DX = T[1] - T[0]


def _densities(kind):
    if kind == "gaussian":
        return stats.norm(1, B).pdf, stats.norm(0, B).pdf, gaussian_exact
    return stats.laplace(1, B).pdf, stats.laplace(0, B).pdf, laplace_exact


def test_softmax_floor_properties(x64):
    q = jnp.linspace(0, 1, 101)
    qt = softmax_floor(q, 0.1, 1e4)
    assert bool(jnp.all(qt >= 0.1)) and bool(jnp.all(qt >= q))
    np.testing.assert_allclose(
        np.asarray(qt), np.maximum(np.asarray(q), 0.1), atol=1e-4 * math.log(2) * 10
    )


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
@pytest.mark.parametrize("lam", [2.0, 5.0, 7.0])
def test_grid_divergence_matches_closed_form(x64, kind, lam):
    p, q, exact = _densities(kind)
    d = renyi_divergence(jnp.asarray(p(T)), jnp.asarray(q(T)), lam, DX)
    # Riemann sum at Δ = 0.0025: spectrally accurate for the Gaussian, O(Δ²) at the Laplace kinks.
    np.testing.assert_allclose(float(d), exact(lam), rtol=1e-7 if kind == "gaussian" else 1e-5)


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_floored_divergence_and_eq18_integrals_match_quadrature(x64, kind):
    """D_λ(p, q_τ) and both parts of eq. (18) on a grid vs adaptive quadrature (scipy)."""
    p, q, _ = _densities(kind)
    lam, tau, beta = 5.0, 2e-3, 1.0 / 2e-3

    def qt(t):
        return np.logaddexp(beta * q(t), beta * tau) / beta

    def quad(f):
        return integrate.quad(f, -80, 80, points=[0.0, 1.0], limit=400, epsabs=1e-13)[0]

    i = quad(lambda t: p(t) ** lam * qt(t) ** (1 - lam))
    j1 = quad(lambda t: p(t) ** (2 * lam - 1) * qt(t) ** (2 - 2 * lam))
    pi = lambda t: 1 / (1 + np.exp(-beta * (q(t) - tau)))  # noqa: E731
    j2 = quad(lambda t: pi(t) ** 2 * qt(t) ** (-2 * lam) * q(t) * p(t) ** (2 * lam))
    j3 = quad(lambda t: pi(t) * qt(t) ** (-lam) * q(t) * p(t) ** lam)
    var_p_ref = lam**2 * (j1 - i * i) / ((lam - 1) * i) ** 2  # Eq. (18), S1 part
    var_q_ref = (1 - lam) ** 2 * (j2 - j3 * j3) / ((lam - 1) * i) ** 2  # Eq. (18), S2 part
    pg, qg = jnp.asarray(p(T)), jnp.asarray(q(T))
    np.testing.assert_allclose(
        float(plugin_divergence(pg, qg, lam, tau, beta, DX)), math.log(i) / (lam - 1), rtol=1e-6
    )
    var_p, var_q = variance_eq18(pg, qg, lam, tau, beta, DX)
    np.testing.assert_allclose(float(var_p), var_p_ref, rtol=1e-5)
    np.testing.assert_allclose(float(var_q), var_q_ref, rtol=1e-5)


def test_gaussian_divergence_matches_mpmath(x64):
    lam = 3.5  # non-integer order, quadrature of the exact densities with mpmath
    mpmath.mp.dps = 30
    f = lambda t: mpmath.npdf(t, 1, B) ** lam * mpmath.npdf(t, 0, B) ** (1 - lam)  # noqa: E731
    ref = float(mpmath.log(mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf])) / (lam - 1))
    d = renyi_divergence(
        jnp.asarray(stats.norm(1, B).pdf(T)), jnp.asarray(stats.norm(0, B).pdf(T)), lam, DX
    )
    np.testing.assert_allclose(float(d), ref, rtol=1e-8)


def test_autodiff_variance_equals_eq18_in_the_h_to_zero_limit(x64):
    """With the kernel shrunk to a point the autodiff influence variance is eq. (18) exactly."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        p = jnp.asarray(rng.dirichlet(np.full(50, 0.7)))
        q = jnp.asarray(rng.dirichlet(np.full(50, 0.7)))
        for lam in (1.5, 2.0, 7.0):
            tau, beta = 0.01, 100.0
            functional = functools.partial(plugin_divergence, lam=lam, floor=tau, beta=beta)
            value, vp, vq = variance_autodiff(functional, p, q)
            rp, rq = variance_eq18(p, q, lam, tau, beta)
            np.testing.assert_allclose([float(vp), float(vq)], [float(rp), float(rq)], rtol=1e-9)


@pytest.mark.slow
def test_autodiff_variance_converges_to_eq18_as_h_shrinks(x64):
    """Finite-h influence (kernel-smoothed gradient) → eq. (18) as h → 0 on a fixed grid."""
    grid = grid_from_range(jnp.array([-40.0]), jnp.array([40.0]), (4001,), (0,))
    t = np.asarray(grid.axes()[0])
    p, q = jnp.asarray(stats.norm(1, B).pdf(t)), jnp.asarray(stats.norm(0, B).pdf(t))
    lam, tau = 5.0, 1e-4
    functional = functools.partial(
        plugin_divergence, lam=lam, floor=tau, beta=1 / tau, cell_volume=grid.cell_volume
    )
    ref = np.array([float(v) for v in variance_eq18(p, q, lam, tau, 1 / tau, grid.cell_volume)])
    gaps = []
    for h in (1.0, 0.3, 0.1):
        half = (int(math.ceil(5 * h / float(grid.spacing[0]))),)
        sm = functools.partial(smooth, grid=grid, bandwidth=jnp.array([h]), half_width=half)
        _, vp, vq = variance_autodiff(functional, p, q, grid.cell_volume, sm)
        gaps.append(np.max(np.abs(np.array([float(vp), float(vq)]) / ref - 1)))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-3, gaps


def test_divergence_nonnegative_and_nondecreasing_in_lambda(x64):
    rng = np.random.default_rng(1)
    lams = jnp.linspace(1.1, 20.0, 40)
    for _ in range(20):
        p = jnp.asarray(rng.dirichlet(np.full(30, 0.5)))
        q = jnp.asarray(rng.dirichlet(np.full(30, 0.5)))
        d = jax.vmap(renyi_divergence, in_axes=(None, None, 0))(p, q, lams)
        assert float(d.min()) >= -1e-12
        assert bool(jnp.all(jnp.diff(d) >= -1e-12))
        same = jax.vmap(renyi_divergence, in_axes=(None, None, 0))(p, p, lams)
        np.testing.assert_allclose(np.asarray(same), 0.0, atol=1e-12)
