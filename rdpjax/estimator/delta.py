"""The estimate, standard error and bias of the plug-in for every order: the delta method.

For each λ, the plug-in ``D_λ(num ‖ den_τ)`` (eq. (14)–(16) of Kutta, Askin, Dunsche,
arXiv:2212.04739v3) and its first-order variance, by eq. (18) or the influence-function
variance at the actual bandwidth (§2.4, :mod:`rdpjax.estimator.variance`); with the
second-order terms (:mod:`rdpjax.estimator.second_order`) also the bias (S1) and variance
(S2), combined by (S5), on the coarser grid of :mod:`rdpjax.estimator.coarse` (the plug-in
itself on the full grid). :meth:`rdpjax.estimator.bound_plan.BoundPlan.bound` turns them into
eq. (16).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from rdpjax._typing import Array
from rdpjax.estimator import coarse
from rdpjax.estimator.divergence import plugin_divergence
from rdpjax.estimator.second_order import Smoothing, second_order_terms, total_variance
from rdpjax.estimator.variance import variance_autodiff, variance_eq18

__all__ = ["delta_method"]


def delta_method(
    num: Array,
    den: Array,
    pmfs: tuple[Array, Array],
    sizes: tuple[Array, Array],
    halves: tuple[Array, Array] | None,
    lam: Array,
    floor: Array,
    beta: Array,
    ops: Smoothing,
    method: str,
) -> tuple[Array, Array, Array]:
    """Estimate, standard error and bias of ``D_λ(num ‖ den_τ)`` for every λ (vmapped).

    ``pmfs`` are the binned pmfs the densities were smoothed from, ``sizes`` the two sample
    sizes and ``halves`` their ``S′π`` (:meth:`Smoothing.densities`), ``None`` without the
    second-order terms: then the bias is zero and the error first-order (eq. (16)).
    """
    cell = ops.cell
    smooth_fn = None if ops.grid is None else ops.s
    n_num, n_den = sizes
    terms_at = _coarse(num, den, pmfs, halves, ops)

    def one(lam_: Array) -> tuple[Array, Array, Array]:
        functional = functools.partial(
            plugin_divergence, lam=lam_, floor=floor, beta=beta, cell_volume=cell
        )
        first = None
        if method == "eq18":
            var_num, var_den = variance_eq18(num, den, lam_, floor, beta, cell)
            est, first = functional(num, den), var_num / n_num + var_den / n_den
        elif halves is None:
            est, var_num, var_den = variance_autodiff(functional, num, den, cell, smooth_fn)
            first = var_num / n_num + var_den / n_den
        else:
            # The second-order terms' closed-form gradient (S3) gives the first-order variance
            # in their own FFT batch: nothing is differentiated.
            est = functional(num, den)
        if halves is None:
            assert first is not None
            return est, jnp.sqrt(first), jnp.zeros_like(est)
        c_num, c_den, c_pmfs, c_halves, c_ops = terms_at
        terms = second_order_terms(
            (c_num, c_den), c_pmfs, (n_num, n_den), lam_, (floor, beta), c_ops, first, c_halves
        )
        return est, jnp.sqrt(total_variance(terms.first_var, terms.second_var)), terms.bias

    return jax.vmap(one)(lam)


def _coarse(
    num: Array,
    den: Array,
    pmfs: tuple[Array, Array],
    halves: tuple[Array, Array] | None,
    ops: Smoothing,
) -> tuple[Array, Array, tuple[Array, Array], tuple[Array, Array] | None, Smoothing]:
    """The second-order terms' inputs on the coarser grid of :mod:`rdpjax.estimator.coarse`.

    Unchanged for relative frequencies, without the terms, or where no axis can be coarsened.
    """
    if ops.grid is None or halves is None or ops.half_width is None:
        return num, den, pmfs, halves, ops
    r = coarse.factors(ops.half_width)
    if all(k == 1 for k in r):
        return num, den, pmfs, halves, ops
    grid, widths = coarse.coarse_grid(ops.grid, ops.half_width, r)
    stacked = (1, *r)  # one subsampling and one pooling for all rows, not one per array
    c_num, c_den, half_p, half_q = coarse.subsample(jnp.stack([num, den, *halves]), stacked)
    pool_p, pool_q = coarse.pool(jnp.stack(pmfs), stacked)
    # S′π is a pmf per cell: its values at the coarse points scale with the cell volume.
    volume = float(math.prod(r))
    return (
        c_num,
        c_den,
        (pool_p, pool_q),
        (volume * half_p, volume * half_q),
        Smoothing(grid, ops.bandwidth, widths),
    )
