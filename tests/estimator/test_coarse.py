"""The second-order terms on the coarser grid (rdpjax.estimator.coarse) against the full grid.

References: numpy slicing for the subsampling; exact sums of cubic polynomials for the pooling
(4-point Lagrange interpolation reproduces cubics); and the terms of
:func:`rdpjax.estimator.second_order.second_order_terms` evaluated on the full grid, as the bound
computed them before the coarse grid existed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.special import ndtri

import rdpjax
from rdpjax.estimator import coarse
from rdpjax.estimator.divergence import plugin_divergence
from rdpjax.estimator.second_order import Smoothing, second_order_terms, total_variance

pytestmark = pytest.mark.usefixtures("x64")


def test_factors_leave_six_cells_per_bandwidth():
    # 1-D default: h/Δ = 16 (half-width 80, or 96 in the bucketed layout) → every 2nd point.
    assert coarse.factors((80,)) == (2,)
    assert coarse.factors((96,)) == (2,)
    assert coarse.factors((96, 20, 0)) == (2, 1, 1)  # 4 cells per h (2-D default): unchanged
    assert coarse.factors((400,)) == (12,)  # h/Δ ≥ (400 − 16)/5 = 76.8 → r = 12
    for m in (16, 80, 96, 161, 400, 1000):  # the guarantee: ≥ 6 cells per h at the worst h/Δ
        (r,) = coarse.factors((m,))
        assert (m - 16) / 5 / r >= coarse.CELLS_PER_BANDWIDTH or r == 1


@pytest.mark.parametrize(("size", "r"), [(17, 2), (18, 2), (23, 4), (9, 3)])
def test_subsample_is_every_rth_point(size, r):
    x = np.arange(size * 3, dtype=float).reshape(size, 3)
    got = np.asarray(coarse.subsample(jnp.asarray(x), (r, 1)))
    expected = x[::r]
    assert got.shape[0] == -(-(size - 1) // r) + 1
    np.testing.assert_array_equal(got[: expected.shape[0]], expected)
    np.testing.assert_array_equal(got[expected.shape[0] :], 0.0)  # past the grid's end


@pytest.mark.parametrize("r", [2, 3, 4])
def test_pool_sums_cubics_exactly_and_keeps_mass(r):
    rng = np.random.default_rng(r)
    size = 10 * r + 7
    pmf = np.zeros(size)
    pmf[r + 2 : size - 2 * r - 2] = rng.random(size - 3 * r - 4)  # empty margins, as on a grid
    pmf /= pmf.sum()
    pooled = np.asarray(coarse.pool(jnp.asarray(pmf), (r,)))
    fine_t, coarse_t = np.arange(size) / r, np.arange(pooled.shape[0])
    assert pooled.sum() == pytest.approx(1.0, abs=1e-14)
    for coeffs in ([1.0], [0.3, -1.0], [2.0, 0.0, -0.5], [0.1, -0.7, 0.2, 1.5]):
        f = np.polynomial.Polynomial(coeffs)
        assert pooled @ f(coarse_t) == pytest.approx(pmf @ f(fine_t), rel=1e-12, abs=1e-12)
    # A quartic is not reproduced: the pooling is cubic, not exact for everything.
    f = np.polynomial.Polynomial([0, 0, 0, 0, 1.0])
    assert abs(pooled @ f(coarse_t) - pmf @ f(fine_t)) > 1e-6


def test_pool_in_two_dimensions_is_separable():
    rng = np.random.default_rng(5)
    pmf = np.zeros((30, 21))
    pmf[5:22, 4:16] = rng.random((17, 12))
    pmf /= pmf.sum()
    pooled = np.asarray(coarse.pool(jnp.asarray(pmf), (3, 2)))
    x, y = np.arange(30) / 3, np.arange(21) / 2
    xc, yc = np.arange(pooled.shape[0]), np.arange(pooled.shape[1])
    fine = np.outer(x**3 - x, 1 + y**2)
    coarse_f = np.outer(xc**3 - xc, 1 + yc**2)
    assert (pooled * coarse_f).sum() == pytest.approx((pmf * fine).sum(), rel=1e-12)


def _full_grid_bound(plan, binned):
    """The bound with the second-order terms on the full grid (the computation before)."""
    ops = Smoothing(binned.grid, binned.bandwidth, plan.half_width)
    dens, pmfs, half = ops.densities(jnp.stack([binned.counts_p, binned.counts_q]), True)
    n_p, n_q = binned.n_p.astype(jnp.float64), binned.n_q.astype(jnp.float64)

    def one(lam):
        est = plugin_divergence(dens[0], dens[1], lam, binned.floor, binned.beta, ops.cell)
        t = second_order_terms(
            (dens[0], dens[1]), (pmfs[0], pmfs[1]), (n_p, n_q), lam, (binned.floor, binned.beta),
            ops, None, (half[0], half[1]),
        )  # fmt: skip
        se = jnp.sqrt(total_variance(t.first_var, t.second_var))
        return est - t.bias + ndtri(plan.alpha / len(plan.lam)) * se, t.bias, se

    return jax.vmap(one)(jnp.asarray(plan.lam))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("law", "n"),
    [("gaussian", 1_000), ("uniform", 1_000), ("null", 5_000)],
)
def test_bound_on_the_coarse_grid_matches_the_full_grid(law, n):
    kp, kq = jax.random.split(jax.random.key(3))
    if law == "uniform":
        p, q = jax.random.uniform(kp, (n,)), 0.1 + jax.random.uniform(kq, (n,))
    else:
        shift = 0.0 if law == "null" else 1.0
        p, q = jax.random.normal(kp, (n,)), shift + jax.random.normal(kq, (n,))
    plan, _, _ = rdpjax.plan_bound(p, q, (2.0, 5.0, 7.0))
    assert coarse.factors(plan.half_width) == (2,)
    binned = plan.bin(p, q)
    got = jax.jit(plan.bound)(binned)
    lower, bias, se = (np.asarray(a) for a in jax.jit(lambda b: _full_grid_bound(plan, b))(binned))
    # Measured (docs/calibration.md): over 200 replications the bound moved ≤ 1.7e-4 of its SE.
    np.testing.assert_allclose(np.asarray(got.std_error), se, rtol=1e-4)
    np.testing.assert_allclose(np.asarray(got.bias), bias, rtol=1e-6, atol=1e-12)
    assert np.max(np.abs(np.asarray(got.lower) - lower) / se) < 1e-3  # r = 4: up to 5e-3
