"""Locally private multinomial estimation (003, Sec. 3): debiased channel outputs, then Π_Δ.

Duchi, Jordan, Wainwright, arXiv:1305.6000, Theorem 1: for θ ∈ Δ_d the minimax risk under α-LDP is
``≍ d/(nα²)`` (effective sample size n ↦ nα²/d). Three channels of the zoo, each with its
unbiased estimator (docs/methods.md §5), optionally projected onto the simplex: 003's bitwise
randomized response (:func:`multinomial_bitwise_rr`), one-hot plus Laplace noise
(:func:`multinomial_laplace`) and Warner's k-ary randomized response (:func:`multinomial_kary_rr`).
Their exact risks before projection: :func:`rdpjax.ldp.risk.multinomial_risk`. O(n · d) per
replication, batched over leading axes.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rdpjax._validation import check_int
from rdpjax.ldp.checks import check_alpha, check_outputs, concrete
from rdpjax.ldp.simplex import maybe_project


def multinomial_bitwise_rr(bits: Any, alpha: Any, *, project: bool = True) -> jax.Array:
    """θ̂ from 003's randomized response on one-hot vectors (zoo: ``OneHotRandomizedResponse``).

    Each bit of ``e_X ∈ {0,1}^d`` is kept with probability ``e^{α/2}/(1+e^{α/2})``, so
    ``E Z_j = θ_j (e^{α/2}−1)/(e^{α/2}+1) + 1/(1+e^{α/2})`` and the unbiased estimate is
    ``θ̂ = (Z̄ − 1/(1+e^{α/2})) (e^{α/2}+1)/(e^{α/2}−1)``, then ``Π_Δ`` (003, Sec. 3 "randomized
    response with minor modification"; docs/methods.md §5). Risk before projection:
    :func:`multinomial_risk` with ``channel="bitwise_rr"``.

    Args:
        bits: privatized outputs, shape ``(..., n, d)``, in {0, 1}.
        alpha: the privacy level α > 0 (scalar, or batched over the leading axes).
        project: project onto the simplex Δ_d (default) or return the unbiased estimate.

    Returns:
        θ̂ of shape ``(..., d)``.

    Raises:
        ValueError: for a bad shape, non-binary concrete bits, or α not finite and > 0.
    """
    bits = check_outputs("bits", bits, min_ndim=2, values="binary")
    alpha = check_alpha(alpha)[..., None]
    n = bits.shape[-2]
    mean = jnp.sum(bits.astype(jnp.int32), axis=-2) / n  # exact counts, then one division
    alpha = alpha.reshape((1,) * (mean.ndim - alpha.ndim) + alpha.shape)  # batch axes explicit
    flip = jax.nn.sigmoid(-alpha / 2.0)  # 1/(1 + e^{α/2})
    theta = (mean - flip) / jnp.tanh(alpha / 4.0)  # (e^{α/2}+1)/(e^{α/2}−1) = coth(α/4)
    return maybe_project(theta, project)


def multinomial_laplace(z: Any, *, project: bool = True) -> jax.Array:
    """θ̂ = Π_Δ(Z̄) from ``Z = e_X + W``, W with i.i.d. Laplace entries of scale 2/α (003, Sec. 3).

    The channel is the zoo's ``LaplaceHistogram(alpha, bins=d)`` run on the point ``(X + ½)/d``
    (bin X). ``Z̄`` is already unbiased, so α is not needed. Risk before projection
    ``(1 − ‖θ‖² + 8d/α²)/n`` (docs/methods.md §5).

    Args:
        z: privatized outputs, shape ``(..., n, d)``, finite.
        project: project onto Δ_d (default) or return the unbiased mean.

    Returns:
        θ̂ of shape ``(..., d)``.

    Raises:
        ValueError: for a bad shape or non-finite concrete outputs.
    """
    z = check_outputs("z", z, min_ndim=2)
    if not jnp.issubdtype(z.dtype, jnp.floating):
        z = z.astype(float)
    return maybe_project(jnp.mean(z, axis=-2), project)


def multinomial_kary_rr(codes: Any, alpha: Any, d: int, *, project: bool = True) -> jax.Array:
    """θ̂ from Warner's k-ary randomized response (the zoo's ``KaryRandomizedResponse``).

    ``P(Z = j) = q_j = (θ_j (e^α − 1) + 1)/(e^α + d − 1)``, so with the relative frequencies
    ``q̂`` the unbiased estimate is ``θ̂ = q̂ + (d q̂ − 1)/(e^α − 1)``, then ``Π_Δ``. Risk before
    projection ``((e^α + d − 1)/(e^α − 1))² Σ_j q_j(1 − q_j)/n`` [derived]: for small α it is of
    order d²/(nα²), a factor d above the minimax rate that the bitwise channel attains.

    Args:
        codes: privatized categories, integer array of shape ``(..., n)`` in ``[0, d)``.
        alpha: the privacy level α > 0 (scalar, or batched over the leading axes).
        d: the number of categories (static int ≥ 2).
        project: project onto Δ_d (default) or return the unbiased estimate.

    Returns:
        θ̂ of shape ``(..., d)``.

    Raises:
        ValueError: for a bad shape, non-integer codes, concrete codes outside ``[0, d)``, or α
            not finite and > 0.
    """
    d = check_int(d, "d", 2)
    codes = check_outputs("codes", codes, min_ndim=1)
    if not jnp.issubdtype(codes.dtype, jnp.integer):
        raise ValueError(f"codes must be integers; got dtype {codes.dtype}")
    host = concrete(codes)
    if host is not None and (host.min() < 0 or host.max() >= d):
        raise ValueError(f"codes must lie in [0, {d}); got values in [{host.min()}, {host.max()}]")
    alpha = check_alpha(alpha)[..., None]
    n = codes.shape[-1]
    flat = codes.reshape(-1, n).astype(jnp.int32)
    counts = jax.vmap(lambda c: jnp.bincount(c, length=d))(flat)  # O(n + d) memory per row
    freq = counts.reshape(codes.shape[:-1] + (d,)) / n
    alpha = alpha.reshape((1,) * (freq.ndim - alpha.ndim) + alpha.shape)  # batch axes explicit
    theta = freq + (d * freq - 1.0) / jnp.expm1(alpha)
    return maybe_project(theta, project)
