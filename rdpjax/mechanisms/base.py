"""The small base of the mechanism zoo: pytree dataclasses, output descriptions, validation.

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
import numpy as np

from rdpjax._pytree import register_dataclass_pytree
from rdpjax._validation import check_int as _check_int
from rdpjax.databases import paper_pair

__all__ = [
    "Mechanism",
    "OutputSpec",
    "binary_code",
    "continuous",
    "count_ones",
    "discrete",
    "from_sampler",
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


def identity_code(samples: jax.Array) -> jax.Array:
    """Scalar integer outputs are their own codes."""
    return jnp.asarray(samples).astype(jnp.int32)


def binary_code(samples: jax.Array) -> jax.Array:
    """Vectors in ``{0,1}^k`` (shape ``(n, k)``) to ``Σ_j b_j 2^j`` (little-endian), int32."""
    bits = jnp.asarray(samples).astype(jnp.int32)
    weights = jnp.left_shift(jnp.int32(1), jnp.arange(bits.shape[-1], dtype=jnp.int32))
    return jnp.sum(bits * weights, axis=-1, dtype=jnp.int32)


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
# Validation helpers. Parameters may be Python numbers, arrays (batched for vmap), tracers, or
# placeholders that JAX passes when it unflattens a pytree; only concrete numbers are checked.


def concrete(value: Any) -> np.ndarray | None:
    """``value`` as a float64 numpy array, or ``None`` if it is traced or not numeric."""
    if isinstance(value, jax.core.Tracer):
        return None
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.ndarray, np.generic, jax.Array)):
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
    """Raise ``ValueError`` naming ``name`` unless every concrete entry lies in the interval."""
    arr = concrete(value)
    if arr is None:
        return
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
        return type(self).__name__

    def encode(self, samples: jax.Array, database: jax.Array | None = None) -> jax.Array:
        """Shortcut for ``self.output(database).encode(samples)``."""
        return self.output(database).encode(samples)


@functools.partial(jax.jit, static_argnums=3)
def _sample_kernel(mechanism: Mechanism, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
    return mechanism._sample(key, database, n)


# --------------------------------------------------------------------------------------------
# User-defined mechanisms.


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
