"""PRNG keys, the numpy Generators drawn from them, and orders that forget the sampler's.

A sampler asked for m i.i.d. outputs may return them in any order: sorted, reversed, or a
discrete law written as ``np.repeat(values, rng.multinomial(m, pmf))``. Every statistic that
reads rows by position (a pilot split, a held-out half, a bet placed pair by pair) first puts
them in :func:`random_order`: sorted, then permuted by a Generator drawn from the audit's key.
The result depends on the rows as a multiset and on the key alone, and for an i.i.d. batch it is
again i.i.d. in order (issue 51).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["as_key", "key_rng", "random_order", "sorted_rows"]


def as_key(key: Any) -> jax.Array:
    """``key`` as one typed ``jax.random`` key (``uint32[2]`` key data is wrapped), or ValueError.

    A batch of keys (``jax.random.split(key, 2)``) is refused too: every rdpjax function that
    draws takes one key and splits it itself.
    """
    if key is None or isinstance(key, str | bytes):
        raise ValueError(f"key must be a jax.random key (jax.random.key(0)); got {key!r}.")
    if not isinstance(key, jax.Array):
        try:
            key = jnp.asarray(key)
        except (TypeError, ValueError):
            raise ValueError(
                f"key must be a jax.random key (jax.random.key(0)); got {type(key).__name__}."
            ) from None
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) and key.shape == ():
        return key
    if key.dtype == jnp.uint32 and key.shape == (2,):
        return jax.random.wrap_key_data(key)
    raise ValueError(
        f"key must be one jax.random key (jax.random.key(0)); got dtype {key.dtype}, shape "
        f"{key.shape}."
    )


def key_rng(key: Any, tag: int | None = None) -> np.random.Generator:
    """A numpy Generator seeded from a JAX key's words (``SeedSequence``).

    With ``tag``, the key is first folded with it, so that each use of one key gets its own
    stream: ``key_rng(key, tag)`` is ``key_rng(jax.random.fold_in(key, tag))``.
    """
    key = as_key(key)
    if tag is not None:
        key = jax.random.fold_in(key, tag)
    data = np.asarray(jax.random.key_data(key)).ravel().astype(np.uint32)
    return np.random.default_rng(np.random.SeedSequence([int(v) for v in data] + [0x5E75]))


def sorted_rows(rows: np.ndarray) -> np.ndarray:
    """``rows`` sorted: values of a 1-D array, rows of a vector output lexicographically."""
    rows = np.asarray(rows)
    if rows.ndim == 1:
        return np.sort(rows)
    flat = rows.reshape(rows.shape[0], -1)
    return rows[np.lexsort(flat.T[::-1])]


def random_order(rng: np.random.Generator, rows: np.ndarray) -> np.ndarray:
    """The same rows, sorted (:func:`sorted_rows`) and then permuted by ``rng``.

    An order that depends on the rows as a multiset and on ``rng`` alone, never on the order
    they came in; for an i.i.d. batch the result is again i.i.d. in order.
    """
    rows = sorted_rows(rows)
    return rows[rng.permutation(rows.shape[0])]
