"""``jax.random`` draws of several dimensions, drawn flat and reshaped.

They have the same bits as ``jax.random``'s own draws and compile faster.

With jax's partitionable Threefry (``jax_threefry_partitionable``, the default), element ``i``
of a draw of shape ``s`` (row-major) is the same as element ``i`` of a flat draw of
``∏ s`` values from the same key: the counters are the flat indices either way. XLA on the CPU
compiles the flat draw several times faster, though (measured: ``docs/performance.md``, section
"Draws of several dimensions drawn flat (rdpjax/mechanisms/_random.py)"), and every
mechanism sampler is compiled once per sample size, inside every study and stream program
that draws from it. The elementwise distributions below are therefore drawn flat; their values
are bitwise those of ``jax.random`` at the full shape (``tests/mechanisms/test_random.py``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike, DTypeLike

__all__ = ["bernoulli", "exponential", "laplace", "normal", "uniform"]


def _flat(shape: tuple[int, ...]) -> tuple[int]:
    return (math.prod(shape),)


def uniform(
    key: jax.Array,
    shape: tuple[int, ...],
    dtype: DTypeLike = float,
    minval: ArrayLike = 0.0,
    maxval: ArrayLike = 1.0,
) -> jax.Array:
    """``jax.random.uniform(key, shape, dtype, minval, maxval)`` (scalar bounds), drawn flat."""
    return jax.random.uniform(key, _flat(shape), dtype, minval, maxval).reshape(shape)


def normal(key: jax.Array, shape: tuple[int, ...], dtype: DTypeLike = float) -> jax.Array:
    """``jax.random.normal(key, shape, dtype)``, drawn flat."""
    return jax.random.normal(key, _flat(shape), dtype).reshape(shape)


def laplace(key: jax.Array, shape: tuple[int, ...], dtype: DTypeLike = float) -> jax.Array:
    """``jax.random.laplace(key, shape, dtype)``, drawn flat."""
    return jax.random.laplace(key, _flat(shape), dtype).reshape(shape)


def exponential(key: jax.Array, shape: tuple[int, ...], dtype: DTypeLike = float) -> jax.Array:
    """``jax.random.exponential(key, shape, dtype)``, drawn flat."""
    return jax.random.exponential(key, _flat(shape), dtype).reshape(shape)


def bernoulli(key: jax.Array, p: ArrayLike, shape: tuple[int, ...]) -> jax.Array:
    """``jax.random.bernoulli(key, p, shape)`` with ``p`` broadcast to ``shape``, drawn flat."""
    p = jnp.asarray(p)
    flat_p = jnp.broadcast_to(p, shape).reshape(-1) if p.ndim else p
    return jax.random.bernoulli(key, flat_p, _flat(shape)).reshape(shape)
