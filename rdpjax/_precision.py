"""Scoped float64.

rdpjax accumulates counts and evaluates its integrals in float64 (float32 bins stop counting past
2^24 per bin; variance formulas subtract nearly equal integrals). It never flips the global
``jax_enable_x64`` flag: public entry points run inside :func:`float64`, a context manager
scoped to the call, and jitted kernels check at trace time that they were entered that way.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import jax

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = ["float64", "scoped_float64", "require_float64"]


def float64() -> contextlib.AbstractContextManager[None]:
    """Context manager enabling 64-bit types for the code inside it only."""
    return jax.enable_x64(True)


def scoped_float64(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``fn`` inside :func:`float64` (for public, host-level entry points)."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with float64():
            return fn(*args, **kwargs)

    return wrapper


def require_float64(where: str) -> None:
    """Raise at trace time when 64-bit types are off (they would silently become 32-bit)."""
    if not jax.config.read("jax_enable_x64"):  # pyright: ignore[reportUnknownMemberType]
        raise RuntimeError(
            f"{where} accumulates in float64 and must run inside `rdpjax.float64()` "
            "(public rdpjax functions do this for you)."
        )
