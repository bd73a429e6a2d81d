"""Array aliases for annotations: device arrays, array-like inputs, typed PRNG keys, scalars.

Pure aliases (importing them costs only importing jax); annotate with them under
``from __future__ import annotations``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

import jax

__all__ = ["Array", "ArrayLike", "PRNGKey", "Scalar", "typed_jit"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

Array = jax.Array
ArrayLike = jax.typing.ArrayLike
PRNGKey = jax.Array  # a typed key, ``jax.random.key``
Scalar = float | jax.Array  # a Python float or a 0-d array


def typed_jit(**options: Any) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """``jax.jit(**options)`` as a decorator that keeps the function's signature for a checker.

    jax types a jitted function's call as returning an unknown type, so every result of one
    would be unknown to basedpyright. The function is jax's jitted object all the same (its
    ``lower``, ``clear_cache``, … are there at run time).
    """
    return cast(Callable[[Callable[_P, _R]], Callable[_P, _R]], jax.jit(**options))
