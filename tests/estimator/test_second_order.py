"""The second-order correction (rdpjax.estimator.second_order) against independent references.

References: the Hessian and gradient by ``jax.hessian``/``jax.grad`` of the plug-in functional
(not the closed forms under test); traces by dense numpy matrices built from the multinomial
covariance; the bias against the Monte-Carlo mean of the plug-in at the null; validity by
replications at P = Q, where the first-order bound is known to fail.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rdpjax
from rdpjax.estimator.api import plan_bound
from rdpjax.estimator.divergence import plugin_divergence
from rdpjax.estimator.grid import Grid
from rdpjax.estimator.kde import fft_kde, smooth
from rdpjax.estimator.second_order import Smoothing, plugin_derivatives, second_order_terms
from rdpjax.estimator.variance import variance_autodiff

pytestmark = pytest.mark.usefixtures("x64")


def _multinomial_cov(pi, n):
    return (np.diag(pi) - np.outer(pi, pi)) / n


def _dense_traces(hess, sigma_p, sigma_q):
    k = sigma_p.shape[0]
    sigma = np.zeros((2 * k, 2 * k))
    sigma[:k, :k], sigma[k:, k:] = sigma_p, sigma_q
    hs = hess @ sigma
    return 0.5 * np.trace(hs), 0.5 * np.trace(hs @ hs), sigma


@pytest.mark.slow
@pytest.mark.parametrize("lam", [1.5, 3.0, 7.0])
def test_closed_form_derivatives_match_autodiff(lam):
    rng = np.random.default_rng(1)
    k = 9
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    q[3] = 2e-3  # below the floor: exercises t′ and t″ of the softmax floor
    p[5] = 0.0  # an empty cell
    p, q = p / p.sum(), q / q.sum()
    floor, beta = 0.01, 100.0

    def f(u):
        return plugin_divergence(u[:k], u[k:], lam, floor, beta, 1.0)

    u = jnp.concatenate([jnp.asarray(p), jnp.asarray(q)])
    hess, grad = np.asarray(jax.hessian(f)(u)), np.asarray(jax.grad(f)(u))
    g_p, g_q, d_pp, d_qq, d_pq = map(np.asarray, plugin_derivatives(p, q, lam, floor, beta))
    g = np.r_[g_p, g_q]
    d = np.block([[np.diag(d_pp), np.diag(d_pq)], [np.diag(d_pq), np.diag(d_qq)]])
    live = np.r_[p > 0, q > -1]  # autodiff's p-derivatives at p = 0 are not defined for λ < 2
    np.testing.assert_allclose(g[live], grad[live], rtol=1e-10, atol=1e-12)
    closed = d - (lam - 1) * np.outer(g, g)
    both = np.outer(live, live)
    np.testing.assert_allclose(closed[both], hess[both], rtol=1e-9, atol=1e-10)


@pytest.mark.slow
def test_frequency_traces_equal_dense_computation():
    rng = np.random.default_rng(2)
    k, lam, floor, beta, n_p, n_q = 12, 4.0, 0.02, 50.0, 1000, 700
    p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
    u = jnp.concatenate([jnp.asarray(p), jnp.asarray(q)])
    hess = np.asarray(
        jax.hessian(lambda v: plugin_divergence(v[:k], v[k:], lam, floor, beta, 1.0))(u)
    )
    grad = np.asarray(jax.grad(lambda v: plugin_divergence(v[:k], v[k:], lam, floor, beta))(u))
    bias_ref, var_ref, sigma = _dense_traces(
        hess, _multinomial_cov(p, n_p), _multinomial_cov(q, n_q)
    )
    first = grad @ sigma @ grad
    terms = second_order_terms((p, q), (p, q), (n_p, n_q), lam, (floor, beta), Smoothing(), first)
    bias, var2 = terms.bias, terms.second_var
    np.testing.assert_allclose(float(bias), bias_ref, rtol=1e-10)
    np.testing.assert_allclose(float(var2), var_ref, rtol=1e-10)


@pytest.mark.slow
def test_kde_bias_exact_and_variance_close_to_dense_computation():
    size, dx, lam, n_p, n_q = 160, 0.1, 3.0, 1000, 700
    grid = Grid(low=jnp.zeros(1), spacing=jnp.array([dx]), shape=(size,))
    h, half = jnp.array([0.35]), (18,)
    x = np.arange(size) * dx

    def binned(mu, s):
        w = np.exp(-0.5 * ((x - mu) / s) ** 2)
        w[: half[0]] = w[-half[0] :] = 0.0
        return w / w.sum()

    pi_p, pi_q = binned(8.0, 1.5), binned(7.5, 1.4)
    smooth_matrix = np.asarray(jax.vmap(lambda e: smooth(e, grid, h, half))(jnp.eye(size))).T
    fp, fq = smooth_matrix @ pi_p / dx, smooth_matrix @ pi_q / dx

    def f(v):
        return plugin_divergence(v[:size], v[size:], lam, 1e-3, 1e3, dx)

    u = jnp.concatenate([jnp.asarray(fp), jnp.asarray(fq)])
    hess, grad = np.asarray(jax.hessian(f)(u)), np.asarray(jax.grad(f)(u))
    cov = [
        smooth_matrix @ (np.diag(pi) - np.outer(pi, pi)) @ smooth_matrix / (n * dx * dx)
        for pi, n in ((pi_p, n_p), (pi_q, n_q))
    ]
    bias_ref, var_ref, sigma = _dense_traces(hess, *cov)
    first = grad @ sigma @ grad
    terms = second_order_terms(
        (fp, fq), (pi_p, pi_q), (n_p, n_q), lam, (1e-3, 1e3), Smoothing(grid, h, half), first
    )
    bias, var2 = terms.bias, terms.second_var
    np.testing.assert_allclose(float(bias), bias_ref, rtol=1e-8)  # no approximation in (S1)
    # (S2) replaces a midpoint value by a geometric mean: O(h²/σ²) ≈ 5% here at most.
    np.testing.assert_allclose(float(var2), var_ref, rtol=0.05)


@pytest.mark.slow
@pytest.mark.parametrize("lam", [1.5, 4.0])
def test_first_order_variance_from_the_closed_form_gradient_equals_autodiff(lam):
    """Without a given ``first_var`` the terms compute ``gᵀΣg`` from the closed-form gradient
    (S3) in their own FFT batch; it must equal the autodiff delta method (§2.4) of the same
    densities, a separate differentiation of the functional."""
    size, dx, n_p, n_q, floor, beta = 200, 0.05, 5000, 3000, 1e-3, 1e3
    grid = Grid(low=jnp.zeros(1), spacing=jnp.array([dx]), shape=(size,))
    h, half = jnp.array([0.2]), (16,)
    rng = np.random.default_rng(4)
    counts = np.zeros((2, size))
    for row, mu in enumerate((5.0, 5.4)):
        x = rng.normal(mu, 1.0, (n_p, n_q)[row])
        counts[row] = np.bincount(
            np.clip(np.round(x / dx), 16, size - 17).astype(int), minlength=size
        )
    ops = Smoothing(grid, h, half)
    dens, pmfs, halves = ops.densities(jnp.asarray(counts), with_half=True)
    functional = lambda a, b: plugin_divergence(a, b, lam, floor, beta, dx)  # noqa: E731
    _, var_p, var_q = variance_autodiff(functional, dens[0], dens[1], dx, ops.s)
    terms = second_order_terms(
        (dens[0], dens[1]), (pmfs[0], pmfs[1]), (n_p, n_q), lam, (floor, beta), ops,
        halves=(halves[0], halves[1]),
    )  # fmt: skip
    np.testing.assert_allclose(float(terms.first_var), var_p / n_p + var_q / n_q, rtol=1e-10)
    # The batched densities are the plain KDE (10) and S′π the h/√2 smoothing of the pmfs.
    np.testing.assert_allclose(
        dens[1], fft_kde(jnp.asarray(counts[1]), grid, h, half), rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(halves[0], ops.half(pmfs[0]), rtol=1e-12, atol=1e-15)


def _null_study(support, n, reps, second_order):
    lam = (2.0, 5.0)

    def draw(key):
        kp, kq = jax.random.split(key)
        return (
            jax.random.randint(kp, (n,), 0, support),
            jax.random.randint(kq, (n,), 0, support),
        )

    p0, q0 = draw(jax.random.PRNGKey(7))
    plan, _, _ = plan_bound(
        np.asarray(p0), np.asarray(q0), lam, support_size=support, second_order=second_order
    )
    out = jax.jit(jax.vmap(lambda k: plan(*draw(k))))(jax.random.split(jax.random.PRNGKey(0), reps))
    return jax.tree.map(np.asarray, out)


def test_bias_estimate_matches_the_plugin_mean_at_the_null():
    reps = 200
    b = _null_study(20, 10**4, reps, second_order=True)
    # The truth is 0, so the plug-in's mean is its bias; b̂ must match it within 4 s.e.
    mean_est = b.estimate.mean(0)
    se = b.estimate.std(0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(mean_est - b.bias.mean(0)) <= 4 * se), (mean_est, b.bias.mean(0), se)
    assert np.all(mean_est > 10 * se)  # and the bias is real: the test could fail without b̂


def test_null_coverage_first_order_fails_second_order_holds():
    reps = 120
    first = _null_study(50, 10**4, reps, second_order=False)
    second = _null_study(50, 10**4, reps, second_order=True)
    # Each bound is at level α/K = 0.025: Bin(120, 0.025) exceeds 9 with probability < 0.2%.
    assert np.sum(first.lower > 0) > 0.9 * first.lower.size  # the defect this module fixes
    assert np.all(np.sum(second.lower > 0, axis=0) <= 9), np.sum(second.lower > 0, axis=0)


def test_identical_laws_give_a_bound_at_most_zero():
    rng = np.random.default_rng(0)
    p, q = rng.integers(0, 50, 10**5), rng.integers(0, 50, 10**5)
    b = rdpjax.lower_bound(p, q, [2.0, 5.0])
    assert b.second_order
    assert float(b.lower.max()) <= 0.0
    off = rdpjax.lower_bound(p, q, [2.0, 5.0], second_order=False)
    assert float(off.lower.max()) > 0.0 and not off.second_order
    np.testing.assert_array_equal(off.bias, 0.0)
    np.testing.assert_array_equal(off.estimate, b.estimate)  # the plug-in itself is unchanged


def test_continuous_null_bound_at_most_zero():
    rng = np.random.default_rng(3)
    p, q = rng.standard_normal(10**4), rng.standard_normal(10**4)
    b = rdpjax.lower_bound(p, q, [2.0, 5.0, 7.0])
    assert np.all(b.lower <= 0.0), b.lower
    assert np.all(b.bias > 0.0)  # the KDE noise biases the plug-in upward
