"""Reference databases: the adjacent pair (21) of Kutta, Askin, Dunsche (arXiv:2212.04739).

The paper audits every mechanism of its Section V on ``x = (1, 0, …, 0)``, ``x' = (0, …, 0)`` in
``[0,1]^m`` with m = 10 (eq. (21)): adjacent (one entry differs) and at ℓ1 distance 1, the largest
possible in the unit cube.
"""

from __future__ import annotations

import jax
import numpy as np

from rdpjax._validation import check_int

__all__ = ["paper_pair"]


def paper_pair(m: int = 10, dim: int | None = None) -> tuple[jax.Array, jax.Array]:
    """The pair (21): ``x = (1, 0, …, 0)``, ``x' = 0`` (eq. (21) of arXiv:2212.04739).

    Args:
        m: number of entries (static), at least 1. The paper uses m = 10.
        dim: ``None`` for scalar entries (arrays of shape ``(m,)``); an int d ≥ 1 for rows in
            ``[0,1]^d`` (shape ``(m, d)``), where the first row of x is all ones — the far corner
            of the cube, so vector-valued sums differ by ``(1, …, 1)``.

    Returns:
        ``(x, x_prime)`` as float arrays (float32 unless x64 is enabled).

    Raises:
        ValueError: if ``m`` or ``dim`` is not a positive int.
    """
    m = check_int(m, "m", 1)
    dim = None if dim is None else check_int(dim, "dim", 1)
    shape = (m,) if dim is None else (m, dim)
    # Built on the host and copied (eager jnp ops and jnp.asarray each compile a program).
    x_prime = np.zeros(shape, dtype=jax.dtypes.canonicalize_dtype(float))
    x = x_prime.copy()
    x[0] = 1.0  # Eq. (21)
    return jax.device_put(x), jax.device_put(x_prime)
