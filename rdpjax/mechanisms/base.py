"""The small base of the mechanism zoo: pytree dataclasses, output descriptions, the base class.

A mechanism is an immutable pytree whose numeric parameters (scales, rates, privacy levels) are
leaves, so ``jax.vmap`` and ``jax.grad`` reach them, and whose shape-determining parameters (number
of categories, number of steps, variant names) are static metadata. Every mechanism offers

* ``sample(key, database, n)``: ``n`` i.i.d. outputs of the mechanism run on ``database``; pure and
  jittable (``n`` static), no Python loop over samples;
* ``output(database=None)``: an :class:`OutputSpec` saying whether outputs are continuous (of
  dimension d) or discrete (with their alphabet and the integer encoding used for counting);
* ``divergence(lam, x, x_prime)``: the exact Rényi divergence ``D_λ(law A(x) ‖ law A(x'))`` as a
  Python float computed on the host in float64, or ``None`` where nothing exact is known;
* ``epsilon``: the pure ε-DP (or α-LDP) level the mechanism satisfies or, for the known-incorrect
  variants, the level it *claims* (``claim_holds`` is then ``False``);
* ``claim``: that claim as a curve λ ↦ claimed ε(λ) (:mod:`rdpjax.claims`): ``pure_dp(epsilon)``
  by default, ``None`` without a level;
* ``reference_pair()``: the pair of databases on which its divergence is reported.

Direction convention (docs/methods.md §3): ``p = law A(x)``, ``q = law A(x')``, ``D_λ(p, q)``.

The validation helpers live in :mod:`rdpjax.mechanisms.checks` and the mechanisms built from a
user's sampling function (:func:`from_sampler`) in :mod:`rdpjax.mechanisms.user`; both are
re-exported here.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from rdpjax._pytree import register_dataclass_pytree
from rdpjax._validation import check_int as _check_int

# The validation helpers, re-exported here (``rdpjax.mechanisms.base.check_range``, …).
from rdpjax.mechanisms.checks import (  # noqa: F401
    as_database,
    check_choice,
    check_int,
    check_lam,
    check_positive,
    check_range,
    check_sample_size,
    concrete,
    finite_or_inf,
    host_database,
    param_value,
    scalar_param,
)

__all__ = [
    "Mechanism",
    "OutputSpec",
    "binary_code",
    "continuous",
    "count_ones",
    "discrete",
    "from_sampler",  # noqa: F822 (loaded on first use, see __getattr__ below)
    "identity_code",
    "pytree_dataclass",
    "static_field",
]

_MAX_CODE_BITS = 30  # int32 codes: binary encodings of vectors of at most 30 bits.


# --------------------------------------------------------------------------------------------
# Pytree dataclasses.


def static_field(**kwargs: Any) -> Any:
    """A dataclass field stored as static pytree metadata (hashable, not traced)."""
    return dataclasses.field(metadata={"static": True}, **kwargs)


def pytree_dataclass(cls: type) -> type:
    """Make ``cls`` a frozen dataclass registered as a pytree.

    Fields are leaves unless declared with :func:`static_field`. ``eq=False`` keeps identity
    hashing: leaves may be arrays, whose ``==`` is elementwise.
    """
    cls = dataclasses.dataclass(frozen=True, eq=False)(cls)
    fields = dataclasses.fields(cls)
    static = [f.name for f in fields if f.metadata.get("static")]
    data = [f.name for f in fields if not f.metadata.get("static")]
    return register_dataclass_pytree(cls, data, static)


# --------------------------------------------------------------------------------------------
# Output descriptions and canonical encodings.


@jax.jit
def identity_code(samples: jax.Array) -> jax.Array:
    """Scalar integer outputs are their own codes."""
    return jnp.asarray(samples).astype(jnp.int32)


@jax.jit
def binary_code(samples: jax.Array) -> jax.Array:
    """Vectors in ``{0,1}^k`` (shape ``(n, k)``) to ``Σ_j b_j 2^j`` (little-endian), int32."""
    bits = jnp.asarray(samples).astype(jnp.int32)
    weights = jnp.left_shift(jnp.int32(1), jnp.arange(bits.shape[-1], dtype=jnp.int32))
    return jnp.sum(bits * weights.reshape((1,) * (bits.ndim - 1) + (-1,)), axis=-1, dtype=jnp.int32)


@jax.jit
def count_ones(samples: jax.Array) -> jax.Array:
    """Vectors in ``{0,1}^m`` (shape ``(n, m)``) to their number of ones, int32."""
    return jnp.sum(jnp.asarray(samples).astype(jnp.int32), axis=-1, dtype=jnp.int32)


@dataclasses.dataclass(frozen=True)
class OutputSpec:
    """What a mechanism outputs.

    Attributes:
        kind: ``"continuous"`` (Lebesgue density on ℝ^d) or ``"discrete"`` (pmf on a finite set).
        dim: continuous: the dimension d (samples are ``(n,)`` when d = 1 and the mechanism is
            scalar, ``(n, d)`` otherwise); discrete: the length of one raw output (1 for scalar
            codes, k for vectors in ``{0,1}^k``).
        alphabet_size: discrete only: the number of codes, which lie in ``[0, alphabet_size)``;
            ``None`` when unknown (``from_sampler`` without ``alphabet_size``).
        encoding: human-readable description of the canonical encoding.
        encoder: jittable map from raw samples to int32 codes of shape ``(n,)``.
    """

    kind: str
    dim: int
    alphabet_size: int | None = None
    encoding: str = "identity"
    encoder: Callable[[jax.Array], jax.Array] | None = dataclasses.field(
        default=None, compare=False
    )

    @property
    def is_discrete(self) -> bool:
        """Whether the output is discrete (``kind == "discrete"``)."""
        return self.kind == "discrete"

    def encode(self, samples: jax.Array) -> jax.Array:
        """Map raw discrete samples to int32 codes in ``[0, alphabet_size)``, shape ``(n,)``.

        Counting codes is a post-processing of the output, so by the data-processing inequality a
        divergence computed on codes never exceeds the one on raw outputs (docs/methods.md §1). For
        every discrete mechanism of the zoo the encoding is injective or, for shuffled randomized
        response, a sufficient statistic, so nothing is lost.

        Raises:
            ValueError: for a continuous output.
        """
        if not self.is_discrete:
            raise ValueError("encode: output is continuous; only discrete outputs have codes")
        encoder = self.encoder if self.encoder is not None else identity_code
        return encoder(samples)


def continuous(dim: int) -> OutputSpec:
    """Continuous output with a density on ℝ^dim."""
    return OutputSpec(kind="continuous", dim=_check_int(dim, "dim", 1), encoding="none")


def discrete(
    alphabet_size: int | None,
    *,
    encoding: str = "identity",
    encoder: Callable[[jax.Array], jax.Array] | None = None,
    dim: int = 1,
) -> OutputSpec:
    """Discrete output with ``alphabet_size`` codes given by ``encoder`` (identity by default)."""
    if alphabet_size is not None:
        alphabet_size = _check_int(alphabet_size, "alphabet_size", 1)
    return OutputSpec(
        kind="discrete", dim=dim, alphabet_size=alphabet_size, encoding=encoding, encoder=encoder
    )


def binary_vector_output(k: int) -> OutputSpec:
    """Vectors in ``{0,1}^k`` encoded as little-endian binary numbers (``2^k`` codes)."""
    if k > _MAX_CODE_BITS:
        raise ValueError(
            f"vectors of length {k} > {_MAX_CODE_BITS} do not fit int32 codes; "
            "audit a projection (e.g. the number of ones) instead"
        )
    return discrete(2**k, encoding="binary number, little-endian", encoder=binary_code, dim=k)


# --------------------------------------------------------------------------------------------
# The base class.


class Mechanism(abc.ABC):
    """A randomized mechanism with its exact output law (see the module docstring)."""

    #: Paper the mechanism comes from (short citation).
    paper: str = ""

    def sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        """``n`` i.i.d. outputs of the mechanism on ``database``.

        Pure and jittable (``n`` static). Concrete inputs are validated here, then one compiled
        kernel (:meth:`_sample`, under ``jax.jit``) draws all samples, as ``jax.random``'s own
        samplers do: an eager call costs one compilation per shape rather than one per operation
        and never materializes unfused intermediates. Under an outer ``jit``/``vmap``/``grad`` the
        kernel is simply inlined.

        Args:
            key: a PRNG key (``jax.random.key`` or ``jax.random.PRNGKey``).
            database: the input; its form is documented by each mechanism.
            n: number of samples (static Python int ≥ 1).

        Returns:
            Continuous outputs as floats of shape ``(n,)`` or ``(n, d)``; discrete outputs as
            integers (codes of shape ``(n,)`` or bit vectors of shape ``(n, k)``, mapped to codes
            by ``output(database).encode``).

        Raises:
            ValueError: for ``n < 1`` or a database of the wrong shape or range.
        """
        n = check_sample_size(n)
        database = jnp.asarray(database)
        self.check_database(database)
        return _sample_kernel(self, key, database, n)

    @abc.abstractmethod
    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        """The sampling kernel (traced; no concrete checks)."""

    def check_database(self, database: jax.Array) -> None:
        """Validate a concrete database before sampling (shapes, ranges); no-op by default."""
        return None

    @abc.abstractmethod
    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Description of the output for ``database`` (default: the reference pair's)."""

    @abc.abstractmethod
    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """The pair ``(x, x')`` on which the exact divergence is reported."""

    def divergence(self, lam: float, x: jax.Array, x_prime: jax.Array) -> float | None:
        """Exact ``D_λ(law A(x) ‖ law A(x'))``, ``None`` where nothing exact is known."""
        check_lam(lam)
        return None

    @property
    def epsilon(self) -> float | None:
        """Pure ε-DP (α-LDP) level, claimed level for known-bad variants, else ``None``."""
        return None

    @property
    def claim(self) -> Any:
        """The privacy claim to check this mechanism against, as an :class:`rdpjax.claims.Claim`.

        ``pure_dp(epsilon)`` when ``epsilon`` is a concrete finite scalar (the tightest RDP curve
        ε-DP implies: binary randomized response at ε, see :func:`rdpjax.claims.pure_dp`), else
        ``None`` (no claim, a traced or batched level). Mechanisms with a sharper claim than pure
        DP (the Gaussian's zCDP) override this.
        """
        value = concrete(self.epsilon)
        if value is None or value.shape != () or not math.isfinite(float(value)):
            return None
        from rdpjax.claims import pure_dp  # lazy: claims must not import the zoo, nor vice versa

        return pure_dp(float(value))

    @property
    def claim_holds(self) -> bool:
        """``False`` for published variants whose privacy claim ``epsilon`` is false."""
        return True

    @property
    def name(self) -> str:
        """The mechanism's name: its class name unless a subclass says otherwise."""
        return type(self).__name__

    def encode(self, samples: jax.Array, database: jax.Array | None = None) -> jax.Array:
        """Shortcut for ``self.output(database).encode(samples)``."""
        return self.output(database).encode(samples)


@functools.partial(jax.jit, static_argnums=3)
def _sample_kernel(mechanism: Mechanism, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
    return mechanism._sample(key, database, n)
