"""User-defined mechanisms: a plain JAX sampling function wrapped as a :class:`Mechanism`.

:func:`from_sampler` builds a :class:`SamplerMechanism`; both are re-exported by
:mod:`rdpjax.mechanisms.base` and :func:`from_sampler` by :mod:`rdpjax.mechanisms`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rdpjax.mechanisms.base import (
    Mechanism,
    OutputSpec,
    binary_vector_output,
    continuous,
    discrete,
    pytree_dataclass,
    static_field,
)
from rdpjax.mechanisms.checks import check_range
from rdpjax.mechanisms.databases import paper_pair

__all__ = ["SamplerMechanism", "from_sampler"]


@pytree_dataclass
class SamplerMechanism(Mechanism):
    """A mechanism defined by a plain sampling function; built by :func:`from_sampler`."""

    sample_fn: Callable[..., jax.Array] = static_field()
    is_discrete: bool = static_field(default=False)
    label: str | None = static_field(default=None)
    alphabet_size: int | None = static_field(default=None)
    encoder: Callable[[jax.Array], jax.Array] | None = static_field(default=None)
    claimed_epsilon: float | None = static_field(default=None)
    user_claim: Any = static_field(default=None)  # an rdpjax.claims.Claim (hashable) or None

    @property
    def name(self) -> str:
        """The ``name`` given to :func:`from_sampler`, else the sampling function's name."""
        return self.label or getattr(self.sample_fn, "__name__", "SamplerMechanism")

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        out = jnp.asarray(self.sample_fn(key, database, n))
        if out.ndim not in (1, 2) or out.shape[0] != n:
            raise ValueError(
                f"{self.name}: sample_fn must return shape (n,) or (n, d) with n={n}; "
                f"got {out.shape}"
            )
        if self.is_discrete and not jnp.issubdtype(out.dtype, jnp.integer):
            raise ValueError(f"{self.name}: a discrete sample_fn must return integers")
        if not self.is_discrete and not jnp.issubdtype(out.dtype, jnp.floating):
            out = out.astype(float)
        return out

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """The output read off the shape of two draws on ``database`` (default: the pair's x).

        Continuous of dimension d, or discrete: vectors of length d > 1 without an ``encoder`` as
        little-endian binary numbers, else the user's ``encoder`` (identity by default) with
        ``alphabet_size`` codes.
        """
        if database is None:
            database = self.reference_pair()[0]
        shape = jax.eval_shape(lambda x: self.sample(jax.random.key(0), x, 2), database).shape
        dim = 1 if len(shape) == 1 else int(shape[1])
        if not self.is_discrete:
            return continuous(dim)
        if dim > 1 and self.encoder is None:
            return binary_vector_output(dim)
        return discrete(
            self.alphabet_size,
            encoding="user encoder" if self.encoder is not None else "identity",
            encoder=self.encoder,
            dim=dim,
        )

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Pair (21) of 000: ``x = (1, 0, …, 0)``, ``x' = 0``, m = 10."""
        return paper_pair()

    @property
    def epsilon(self) -> float | None:
        """The ``epsilon`` given to :func:`from_sampler`, or the ε of a ``pure_dp`` claim."""
        if self.claimed_epsilon is None and self.user_claim is not None:
            if self.user_claim.kind == "pure_dp":
                return float(self.user_claim.params["epsilon"])
        return self.claimed_epsilon

    @property
    def claim(self) -> Any:
        """The ``claim`` given to :func:`from_sampler`, else ``pure_dp(epsilon)``, else ``None``."""
        if self.user_claim is not None:
            return self.user_claim
        return super().claim


def from_sampler(
    sample_fn: Callable[[jax.Array, jax.Array, int], jax.Array],
    *,
    discrete: bool = False,
    name: str | None = None,
    alphabet_size: int | None = None,
    encode: Callable[[jax.Array], jax.Array] | None = None,
    epsilon: float | None = None,
    claim: Any = None,
) -> Mechanism:
    """Wrap a plain JAX sampling function as a mechanism.

    Args:
        sample_fn: ``sample_fn(key, database, n)`` returning ``n`` outputs, shape ``(n,)`` or
            ``(n, d)``: floats for a continuous mechanism, integers for a discrete one. It must be
            pure and jittable with ``n`` static.
        discrete: whether outputs are discrete (integer codes, or vectors of bits).
        name: display name (default: the function's name).
        alphabet_size: discrete only: the number of codes, if known.
        encode: discrete only: map from raw samples to int32 codes; default identity for scalar
            codes and little-endian binary numbers for ``(n, d)`` bit vectors.
        epsilon: a claimed ε-DP level to audit against, if any (the same as
            ``claim=pure_dp(epsilon)``).
        claim: a claimed privacy curve to check against, an :class:`rdpjax.claims.Claim`
            (``pure_dp``, ``zcdp``, ``gdp``, ``rdp``, ``from_dp_accounting``), if any; not
            together with ``epsilon``.

    Returns:
        A :class:`Mechanism` whose ``divergence`` is ``None`` (no exact law is known) and whose
        reference pair is the paper pair (21).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from rdpjax import mechanisms
        >>> def noisy_sum(key, x, n):
        ...     return jnp.sum(x) + 2.0 * jax.random.normal(key, (n,))
        >>> mech = mechanisms.from_sampler(noisy_sum, name="noisy sum")
        >>> x, x_prime = mech.reference_pair()
        >>> mech.sample(jax.random.key(0), x, 5).shape
        (5,)
    """
    if not callable(sample_fn):
        raise ValueError(f"sample_fn must be callable; got {sample_fn!r}")
    if not discrete and (alphabet_size is not None or encode is not None):
        raise ValueError("alphabet_size and encode apply only to discrete=True")
    if epsilon is not None:
        check_range("epsilon", epsilon, low=0.0, low_open=False)
    if claim is not None:
        from rdpjax.claims import as_claim  # lazy: see Mechanism.claim

        claim = as_claim(claim)
        if epsilon is not None:
            raise ValueError(
                f"give epsilon or claim, not both (epsilon={epsilon!r} is "
                f"claim=pure_dp({epsilon!r})); got claim={claim}"
            )
    return SamplerMechanism(
        sample_fn=sample_fn,
        is_discrete=bool(discrete),
        label=name,
        alphabet_size=alphabet_size,
        encoder=encode,
        claimed_epsilon=None if epsilon is None else float(epsilon),
        user_claim=claim,
    )
