"""Euclidean projection onto the scaled simplex ``total · Δ_k`` (003's Π_Δ and Π_k).

Duchi, Jordan, Wainwright, arXiv:1305.6000, project the unbiased estimates back onto the valid
parameters: Π_Δ for the multinomial (Sec. 3), ``Π_k(v) = k Π_Δ(v/k)`` onto kΔ_k for the private
histogram (Sec. 4, Proposition 2). Exact and sort-based, O(k log k) per vector, batched over
leading axes (docs/methods.md §5).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.ldp.checks import concrete


def project_simplex(v: Any, total: Any = 1.0) -> jax.Array:
    """Euclidean projection onto ``total · Δ_k = {w ≥ 0, Σ w = total}``, along the last axis.

    Exact, sort-based: with ``u`` the entries sorted in decreasing order,
    ``ρ = max{j : u_j − (Σ_{r≤j} u_r − total)/j > 0}``, ``θ = (Σ_{r≤ρ} u_r − total)/ρ`` and
    ``w = max(v − θ, 0)`` (Held, Wolfe, Crowder 1974; Duchi, Shalev-Shwartz, Singer, Chandra,
    ICML 2008, Fig. 1), computed by ``optax.projections.projection_simplex``. 003 uses it as Π_Δ
    (multinomial, Sec. 3) and as ``Π_k(v) = k Π_Δ(v/k)``, the projection onto kΔ_k (private
    histogram, Sec. 4), which is ``project_simplex(v, total=k)``. Cost O(k log k) per vector;
    batched over leading axes.

    Args:
        v: array of shape ``(..., k)``, k ≥ 1.
        total: the simplex scale (> 0), a scalar or an array broadcasting to ``v.shape[:-1]``
            (a pytree leaf: it may be traced).

    Returns:
        The projection, shape and (floating) dtype of ``v``.

    Raises:
        ValueError: for a scalar or empty ``v``, a non-finite concrete ``v``, a concrete
            ``total`` that is not finite and > 0, or a ``total`` that does not broadcast.

    Examples:
        >>> import rdpjax.ldp as ldp
        >>> [round(float(w), 6) for w in ldp.project_simplex([0.5, 0.8, -0.1])]
        [0.35, 0.65, 0.0]
    """
    v = jnp.asarray(v)
    if v.ndim < 1 or v.shape[-1] < 1:
        raise ValueError(f"v must have shape (..., k) with k >= 1; got {v.shape}")
    if not jnp.issubdtype(v.dtype, jnp.floating):
        v = v.astype(float)
    host = concrete(v)
    if host is not None and not np.all(np.isfinite(host)):
        raise ValueError("v must be finite (the projection of a NaN or inf is undefined)")
    host_total = concrete(total)
    if host_total is not None and not np.all(np.isfinite(host_total) & (host_total > 0)):
        raise ValueError(f"total must be finite and > 0; got {total!r}")
    total = jnp.asarray(total, dtype=v.dtype)
    try:
        total = jnp.broadcast_to(total, v.shape[:-1])
    except ValueError:
        raise ValueError(
            f"total of shape {total.shape} does not broadcast to v.shape[:-1] = {v.shape[:-1]}"
        ) from None
    return _project_simplex(v, total)


@jax.jit
def _project_simplex(v: jax.Array, total: jax.Array) -> jax.Array:
    # optax's sort-based projection (one vector; the same algorithm as the docstring's), vmapped
    # over the leading axes: it agrees with the hand-written version it replaced to 1e-15.
    import optax  # here, not at import of rdpjax: 0.06 s

    k = v.shape[-1]
    # optax divides by an int array (a cumsum by its 1-based index) inside: it needs standard
    # dtype promotion, which this keeps where a caller runs jax's strict mode.
    with jax.numpy_dtype_promotion("standard"):
        flat = jax.vmap(optax.projections.projection_simplex)(v.reshape(-1, k), total.reshape(-1))
    return flat.reshape(v.shape)


def maybe_project(theta: jax.Array, project: bool, total: Any = 1.0) -> jax.Array:
    """``theta`` projected onto ``total · Δ_k`` along its last axis if ``project``, else as it is.

    Unlike :func:`project_simplex`, nothing is checked; ``total`` broadcasts over the leading axes.
    """
    return _project_simplex(theta, jnp.broadcast_to(total, theta.shape[:-1])) if project else theta
