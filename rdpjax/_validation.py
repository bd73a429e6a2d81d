"""Argument checks shared by the public entry points.

Sizes, counts and other whole-number arguments are *static* in rdpjax: they fix array shapes,
so they must be concrete Python or NumPy integers, never a float such as ``1e6`` (which the
command line parses for the user) or a bool.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

__all__ = ["check_flag", "check_int", "check_level", "check_orders"]


def check_int(value: object, name: str, minimum: int, maximum: int | None = None) -> int:
    """``value`` as a Python int, or a ``ValueError`` naming ``name`` and the allowed range.

    Accepts ``int`` and NumPy integers (``np.int64(10)`` from an array or a loop over one);
    rejects bools, floats (``2.5e6`` is not a size: the caller must say ``int(2.5e6)``) and
    anything outside ``[minimum, maximum]``.
    """
    if not isinstance(value, bool | np.bool_) and isinstance(value, int | np.integer):
        number = int(cast("int | np.integer[Any]", value))
        if minimum <= number and (maximum is None or number <= maximum):
            return number
    allowed = f"≥ {minimum}" if maximum is None else f"in [{minimum}, {_readable(maximum)}]"
    raise ValueError(f"{name} must be an int {allowed}; got {value!r}.")


def check_flag(value: object, name: str, *, none: bool = False) -> bool | None:
    """``value`` as a Python bool (``None`` kept with ``none``), or a ValueError naming ``name``.

    Accepts bools, NumPy bools and the ints 0 and 1; rejects strings (``"False"`` is truthy, so
    reading it as a flag would silently mean ``True``), floats and anything else.
    """
    if none and value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(cast("bool", value))
    if isinstance(value, int | np.integer):
        number = int(cast("int | np.integer[Any]", value))
        if number in (0, 1):
            return number == 1
    allowed = "True, False or None" if none else "True or False"
    raise ValueError(f"{name} must be {allowed}; got {value!r}.")


def check_level(value: object, name: str = "alpha", upper: float = 0.5) -> float:
    """A level in ``(0, upper)`` as a Python float, or a ``ValueError`` naming ``name``.

    Accepts what ``float`` reads as a number (Python, NumPy and JAX scalars); rejects bools and
    strings (``"0.05"`` is not a level, though ``float`` would read it), NaN and anything
    outside.
    """
    message = f"{name} must be a number in (0, {upper:g}); got {value!r}."
    if isinstance(value, str | bytes | bool | np.bool_):
        raise ValueError(message)
    try:
        level = float(cast("float", value))
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not 0.0 < level < upper:
        raise ValueError(message)
    return level


def _readable(value: int) -> str:
    """Large powers of two as ``2^k`` (the int64 limits), other values as they are."""
    if value >= 2**20 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    return str(value)


def check_orders(lam: object, name: str = "lam") -> np.ndarray:
    """One order λ > 1 or a non-empty 1-D sequence of them, as a float64 array.

    Anything else raises a ``ValueError`` naming ``name`` (the one order check of the bounds,
    the search and the studies).
    """
    try:
        arr = np.atleast_1d(np.asarray(lam, dtype=np.float64))
    except (TypeError, ValueError):
        message = f"{name} must be a number or a sequence of numbers; got {lam!r}."
        raise ValueError(message) from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a number or a non-empty 1-D sequence; got {lam!r}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1):
        raise ValueError(f"every order {name} must be finite and > 1; got {arr.tolist()}.")
    return arr
