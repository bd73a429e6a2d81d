"""The bound does not depend on the outputs' units, down to 2^-990 and up to 2^990.

Outputs multiplied by a power of two are the same outputs in other units: their Rényi
divergence and the bound are the same. Outputs of magnitude beyond about 10^±80 used to fail
("not finite", or a ZeroDivisionError below 10^-150) because the densities' powers and the
squares of the deviations left float64; they are now bounded in units of a power of two
(rdpjax.estimator.grid.in_bounded_units, rdpjax.estimator.settings._robust_scale), which leaves
ordinary data bit for bit as before (the golden tests). Fixed seeds.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import rdpjax

EXPONENTS = (-990, -300, -80, 80, 300, 990)


def _samples(d: int, n: int = 20_000):
    rng = np.random.default_rng(d)
    shape = (n,) if d == 1 else (n, d)
    return rng.normal(0.5, 1.0, shape), rng.normal(0.0, 1.0, shape)


@pytest.mark.parametrize("transform", [None, "auto"])
def test_one_axis_outputs_in_any_units_get_the_same_bound(transform):
    p, q = _samples(1)
    ref = rdpjax.lower_bound(p, q, [2, 5], transform=transform)
    for k in EXPONENTS:
        b = rdpjax.lower_bound(np.ldexp(p, k), np.ldexp(q, k), [2, 5], transform=transform)
        np.testing.assert_allclose(b.lower, ref.lower, rtol=1e-12, err_msg=f"2^{k}")
        np.testing.assert_allclose(b.estimate, ref.estimate, rtol=1e-12, err_msg=f"2^{k}")
        if transform is None:  # the map's bandwidth is in the map's units, not the outputs'
            np.testing.assert_allclose(
                np.asarray(b.bandwidth), np.ldexp(np.asarray(ref.bandwidth), k), rtol=1e-12
            )


def test_two_axis_outputs_far_from_one_get_the_same_bound_or_a_clear_refusal():
    p, q = _samples(2)
    ref = rdpjax.lower_bound(p, q, [2], transform=None)
    for k in (-300, 300):
        b = rdpjax.lower_bound(np.ldexp(p, k), np.ldexp(q, k), [2], transform=None)
        np.testing.assert_allclose(b.lower, ref.lower, rtol=1e-12)
    # At 2^990 a side the density of two axes is 2^-1980: beyond float64, said so.
    with pytest.raises(ValueError, match="magnitude puts their density beyond float64"):
        rdpjax.lower_bound(np.ldexp(p, 990), np.ldexp(q, 990), [2], transform=None)


@pytest.mark.parametrize("k", [-600, 600])
def test_a_streamed_bound_of_outputs_far_from_one_is_the_same(k):
    def sampler(shift):
        return lambda key, n: (shift + jax.random.normal(key, (n,))) * 2.0**k

    def unit(shift):
        return lambda key, n: shift + jax.random.normal(key, (n,))

    key = jax.random.key(3)
    far = rdpjax.stream.streamed_bound(
        key, rdpjax.stream.JaxSamplers(sampler(1.0), sampler(0.0)), [2, 5], n=20_000
    )
    ref = rdpjax.stream.streamed_bound(
        key, rdpjax.stream.JaxSamplers(unit(1.0), unit(0.0)), [2, 5], n=20_000
    )
    np.testing.assert_allclose(far.lower, ref.lower, rtol=1e-12)
