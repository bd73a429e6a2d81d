"""Validation helpers of the mechanism zoo: parameters, orders λ, databases, sample sizes.

Parameters may be Python numbers, arrays (batched for vmap), tracers, or placeholders that JAX
passes when it unflattens a pytree; only concrete numbers are checked. They are re-exported by
:mod:`rdpjax.mechanisms.base`.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._validation import check_int as _check_int

__all__ = [
    "as_database",
    "check_choice",
    "check_int",
    "check_lam",
    "check_positive",
    "check_range",
    "check_sample_size",
    "concrete",
    "finite_or_inf",
    "host_database",
    "param_value",
    "scalar_param",
]


def concrete(value: Any) -> np.ndarray | None:
    """``value`` as a float64 numpy array, or ``None`` if it is traced or not numeric."""
    if isinstance(value, jax.core.Tracer):
        return None
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.ndarray, np.generic, jax.Array, list, tuple)):
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    return None


def param_value(value: Any) -> float | np.ndarray | None:
    """A concrete parameter as a float (or float64 array when batched); ``None`` if traced."""
    arr = concrete(value)
    if arr is None:
        return None
    return float(arr) if arr.ndim == 0 else arr


def check_range(
    name: str,
    value: Any,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = True,
    high_open: bool = True,
) -> None:
    """Raise ``ValueError`` naming ``name`` unless every concrete entry lies in the interval.

    A traced value is not checked. Anything else that is not numbers (``None``, a string, a
    bool) is refused, and a list is checked entry by entry: ``Laplace([-5.0])`` is an error.
    """
    if isinstance(value, jax.core.Tracer):
        return
    arr = None if isinstance(value, (bool, np.bool_)) else concrete(value)
    if arr is None or arr.dtype == object:
        raise ValueError(f"{name} must be a number; got {value!r}")
    ok = np.isfinite(arr)
    ok &= arr > low if low_open else arr >= low
    ok &= arr < high if high_open else arr <= high
    if not np.all(ok):
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ValueError(f"{name} must be finite and in {lo}{low}, {high}{hi}; got {value!r}")


def check_positive(name: str, value: Any) -> None:
    """``value > 0`` and finite."""
    check_range(name, value, low=0.0)


def check_int(name: str, value: Any, minimum: int, maximum: int | None = None) -> None:
    """A static int (Python or NumPy) in ``[minimum, maximum]``; see ``rdpjax._validation``."""
    _check_int(value, name, minimum, maximum)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")


def check_lam(lam: Any, *, allow_inf: bool = True) -> float:
    """The order λ as a float > 1 (``math.inf`` allowed where D_∞ is computed)."""
    try:
        value = float(lam)
    except (TypeError, ValueError):
        raise ValueError(f"lam must be a real number > 1; got {lam!r}") from None
    if math.isnan(value) or value <= 1.0 or (math.isinf(value) and not allow_inf):
        accepted = "(1, inf]" if allow_inf else "(1, inf)"
        raise ValueError(f"lam must be in {accepted}; got {lam!r}")
    return value


def scalar_param(name: str, value: Any) -> float:
    """A parameter as a host float, for exact (host-side) computations."""
    arr = concrete(value)
    if arr is None or arr.shape != ():
        raise ValueError(
            f"divergence needs a concrete scalar {name}; got {value!r} "
            "(call it outside jit/vmap, on an unbatched mechanism)"
        )
    return float(arr)


def as_database(database: Any, *, ndims: tuple[int, ...] = (1, 2)) -> jax.Array:
    """``database`` as a floating jnp array whose rank is in ``ndims``."""
    x = jnp.asarray(database)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(float)
    if x.ndim not in ndims:
        raise ValueError(f"database must have rank in {ndims}; got shape {x.shape}")
    if x.size == 0:
        raise ValueError("database must not be empty")
    return x


def host_database(database: Any, *, ndims: tuple[int, ...] = (1, 2)) -> np.ndarray:
    """``database`` as a float64 numpy array (for exact computations), rank checked."""
    if isinstance(database, jax.core.Tracer):
        raise ValueError("divergence needs concrete databases, not traced values")
    x = np.asarray(database, dtype=np.float64)
    if x.ndim not in ndims:
        raise ValueError(f"database must have rank in {ndims}; got shape {x.shape}")
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError("database must be non-empty and finite")
    return x


def check_sample_size(n: Any) -> int:
    """``n`` is the static number of samples."""
    check_int("n", n, 1)
    return int(n)


def finite_or_inf(value: float, what: str) -> float:
    """Guard the host computations: never hand back a NaN."""
    if math.isnan(value):
        raise FloatingPointError(f"{what} evaluated to NaN")
    return float(max(value, 0.0))  # D_λ ≥ 0; tiny negative values are rounding.
