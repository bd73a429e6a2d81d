"""Array aliases for annotations: device arrays, array-like inputs, typed PRNG keys, scalars.

Pure aliases (importing them costs only importing jax); annotate with them under
``from __future__ import annotations``.
"""

from __future__ import annotations

import jax

__all__ = ["Array", "ArrayLike", "PRNGKey", "Scalar"]

Array = jax.Array
ArrayLike = jax.typing.ArrayLike
PRNGKey = jax.Array  # a typed key, ``jax.random.key``
Scalar = float | jax.Array  # a Python float or a 0-d array
