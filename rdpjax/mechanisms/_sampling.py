"""Vectorized exact samplers shared by the discrete mechanisms."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rdpjax.mechanisms import _random


def uniform_arrangement(key: jax.Array, counts: jax.Array, length: int) -> jax.Array:
    """Bit vectors with ``counts[i]`` ones placed uniformly at random among ``length`` slots.

    Sequential selection: slot j is a one with probability ``remaining / (length − j)``, which
    makes every arrangement of the given count equally likely (the law of a uniformly random
    permutation applied to any vector with that many ones). Exactly ``counts[i]`` ones always:
    when ``remaining = length − j`` the comparison is certain, when 0 impossible.

    Args:
        key: PRNG key.
        counts: integer array of shape ``(n,)`` with entries in ``[0, length]``.
        length: static number of slots.

    Returns:
        Boolean array of shape ``(n, length)``. Cost: ``n · length`` uniforms, a ``scan`` over
        the slots, no sort.
    """
    uniforms = _random.uniform(key, (length, counts.shape[0]))
    free = jnp.arange(length, 0, -1, dtype=uniforms.dtype)  # length − j
    _, bits = jax.lax.scan(_place, counts.astype(jnp.int32), (uniforms, free))
    return bits.T


def _place(remaining: jax.Array, inputs: tuple[jax.Array, jax.Array]):
    """One slot of :func:`uniform_arrangement` (module level, so eager scans hit the cache)."""
    u, slots_left = inputs
    bit = u * slots_left < remaining.astype(u.dtype)
    return remaining - bit.astype(remaining.dtype), bit
