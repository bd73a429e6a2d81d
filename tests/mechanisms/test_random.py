"""rdpjax.mechanisms._random: flat draws reshaped are bitwise jax.random's shaped draws."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rdpjax._precision import float64
from rdpjax.mechanisms import _random

SHAPES = [(7,), (5, 3), (4, 1), (1, 6), (3, 2, 4)]


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("x64", [False, True])
def test_flat_draws_equal_shaped_draws(shape, x64):
    key = jax.random.key(11)
    with float64() if x64 else jax.enable_x64(False):
        pairs = [
            (_random.uniform(key, shape), jax.random.uniform(key, shape)),
            (
                _random.uniform(key, shape, minval=-2.0, maxval=3.0),
                jax.random.uniform(key, shape, minval=-2.0, maxval=3.0),
            ),
            (_random.normal(key, shape), jax.random.normal(key, shape)),
            (_random.laplace(key, shape), jax.random.laplace(key, shape)),
            (_random.exponential(key, shape), jax.random.exponential(key, shape)),
            (_random.bernoulli(key, 0.3, shape), jax.random.bernoulli(key, 0.3, shape)),
            (
                _random.bernoulli(key, jnp.asarray(0.7), shape),
                jax.random.bernoulli(key, jnp.asarray(0.7), shape),
            ),
        ]
        # A probability per last coordinate, broadcast over the leading ones (series.py's use).
        p = jnp.linspace(0.1, 0.9, shape[-1]).reshape((1,) * (len(shape) - 1) + (-1,))
        pairs.append((_random.bernoulli(key, p, shape), jax.random.bernoulli(key, p, shape)))
    for ours, theirs in pairs:
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_flat_draws_equal_shaped_draws_under_vmap():
    keys = jax.random.split(jax.random.key(3), 4)
    ours = jax.vmap(lambda k: _random.normal(k, (6, 5)))(keys)
    theirs = jax.vmap(lambda k: jax.random.normal(k, (6, 5)))(keys)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
