"""A small helper to declare frozen dataclasses as JAX pytrees.

Fields listed in ``static`` become auxiliary data (hashable, part of the tree structure, so a
change recompiles); every other field is a leaf that flows through ``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

try:  # Python ≥ 3.11
    from typing import dataclass_transform
except ImportError:  # pragma: no cover - Python 3.10
    from typing_extensions import dataclass_transform

import jax

__all__ = ["pytree_dataclass", "register_dataclass_pytree"]


_C = TypeVar("_C", bound=type)

_Aux = tuple[type, tuple[Any, ...]]


def register_dataclass_pytree(
    cls: _C, data_fields: Sequence[str], meta_fields: Sequence[str]
) -> _C:
    """Register a frozen dataclass as a pytree whose structure includes its *class*.

    ``jax.tree_util.register_dataclass`` (jax 0.10.2) gives tree structures that compare equal
    across different classes with the same field names (``Laplace(5)`` and ``Gaussian(5)``)
    while hashing differently, so jit caches confused them intermittently: a Gaussian draw
    came back from the Laplace kernel. Here the class is part of the auxiliary data.
    Unflattening bypasses ``__init__`` (no validation on tracers), as ``register_dataclass`` does.
    """
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(obj: Any) -> tuple[list[tuple[Any, Any]], _Aux]:
        children = [(jax.tree_util.GetAttrKey(n), getattr(obj, n)) for n in data_fields]
        return children, (cls, tuple(getattr(obj, n) for n in meta_fields))

    def flatten(obj: Any) -> tuple[list[Any], _Aux]:
        children = [getattr(obj, n) for n in data_fields]
        return children, (cls, tuple(getattr(obj, n) for n in meta_fields))

    def unflatten(aux: _Aux, children: Iterable[Any]) -> Any:
        obj = cast(Any, object.__new__(cls))
        for name, value in zip(data_fields, children, strict=True):
            object.__setattr__(obj, name, value)
        for name, value in zip(meta_fields, aux[1], strict=True):
            object.__setattr__(obj, name, value)
        return obj

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
    return cls


_T = TypeVar("_T")


@dataclass_transform(frozen_default=True)
def pytree_dataclass(static: Sequence[str] = ()) -> Callable[[type[_T]], type[_T]]:
    """Decorate a class as a frozen dataclass registered as a pytree.

    A type checker sees a frozen dataclass (``typing.dataclass_transform``).

    Args:
      static: names of fields that are static (aux data), e.g. shapes or flags.

    Returns:
      A class decorator.
    """

    def wrap(cls: type[_T]) -> type[_T]:
        cls = dataclasses.dataclass(frozen=True)(cls)
        names = [f.name for f in dataclasses.fields(cls)]  # pyright: ignore[reportArgumentType]
        data = [n for n in names if n not in static]
        meta = [n for n in names if n in static]
        return register_dataclass_pytree(cls, data, meta)

    return wrap
