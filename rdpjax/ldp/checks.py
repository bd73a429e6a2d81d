"""Argument checks of :mod:`rdpjax.ldp`, on concrete values only (tracers pass through).

Under ``jit`` only shapes can be checked; a concrete α, concrete outputs or a concrete simplex
scale are checked for range and finiteness before anything is traced.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def concrete(value: Any) -> np.ndarray | None:
    """``value`` as a float64 numpy array, or ``None`` for a tracer or a non-numeric value."""
    if isinstance(value, jax.core.Tracer):
        return None
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def check_alpha(alpha: Any) -> jax.Array:
    """α > 0 and finite (α = 0 makes every debiasing factor infinite)."""
    value = concrete(alpha)
    if value is not None and not np.all(np.isfinite(value) & (value > 0)):
        raise ValueError(f"alpha (the privacy level α) must be finite and > 0; got {alpha!r}")
    return jnp.asarray(alpha)


def check_outputs(name: str, z: Any, *, min_ndim: int, values: str = "finite") -> jax.Array:
    """Privatized outputs: rank ≥ ``min_ndim``, non-empty, finite / binary when concrete."""
    arr = jnp.asarray(z)
    if arr.ndim < min_ndim or arr.size == 0:
        shape = "(..., n, d)" if min_ndim == 2 else "(..., n)"
        raise ValueError(f"{name} must be a non-empty array of shape {shape}; got {arr.shape}")
    host = concrete(arr)
    if host is not None:
        if values == "binary" and not np.all((host == 0) | (host == 1)):
            raise ValueError(f"{name} must hold bits in {{0, 1}}")
        if not np.all(np.isfinite(host)):
            raise ValueError(f"{name} must be finite")
    return arr
