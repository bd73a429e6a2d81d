"""A small helper to declare frozen dataclasses as JAX pytrees.

Fields listed in ``static`` become auxiliary data (hashable, part of the tree structure, so a
change recompiles); every other field is a leaf that flows through ``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax

__all__ = ["pytree_dataclass"]


def pytree_dataclass(static: Sequence[str] = ()):
    """Decorate a class as a frozen dataclass registered as a pytree.

    Args:
      static: names of fields that are static (aux data), e.g. shapes or flags.

    Returns:
      A class decorator.
    """

    def wrap(cls):
        cls = dataclasses.dataclass(frozen=True)(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        data = [n for n in names if n not in static]
        meta = [n for n in names if n in static]
        return jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)

    return wrap
