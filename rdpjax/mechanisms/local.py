"""Locally private channels of paper 003 (Duchi, Jordan, Wainwright, arXiv:1305.6000, Sec. 3–4).

The input ("database") of each channel is one individual's value: a category ``X ∈ {0, …, k−1}``
(multinomial estimation; the paper numbers categories 1..d and identifies X with ``e_X``) or a point
``X ∈ [0, 1]`` (density estimation). α is the local privacy level of 003 (α-LDP), not a confidence
level; ``Laplace(κ)`` of 003 has rate κ, i.e. scale ``1/κ`` (docs/methods.md §5).

* :class:`KaryRandomizedResponse`: Warner's k-ary randomized response — the true category with
  probability ``e^α/(e^α + k − 1)``, each other one with ``1/(e^α + k − 1)``.
* :class:`OneHotRandomizedResponse`: 003's randomized response "with minor modification": each bit
  of the one-hot vector ``e_X ∈ {0,1}^k`` kept with probability ``e^{α/2}/(1 + e^{α/2})``, flipped
  otherwise (α-LDP since ``‖e_x − e_x'‖₁ ≤ 2``).
* :class:`LaplaceHistogram`: the private histogram of 003 for densities on [0, 1]:
  ``Z = e_{bin(X)} + W``, W with i.i.d. Laplace entries of scale 2/α; continuous of dimension k.

Exact divergences by enumeration (k outcomes; for the one-hot vector, two independent coordinates
differ) and by the Laplace closed form per coordinate for the histogram.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact, _random
from rdpjax.mechanisms.base import (
    Mechanism,
    OutputSpec,
    binary_vector_output,
    continuous,
    discrete,
    pytree_dataclass,
    static_field,
)
from rdpjax.mechanisms.checks import (
    check_int,
    check_lam,
    check_range,
    concrete,
    param_value,
    scalar_param,
)

__all__ = ["KaryRandomizedResponse", "LaplaceHistogram", "OneHotRandomizedResponse"]

_PAPER = "Duchi, Jordan, Wainwright, arXiv:1305.6000"


def _category(database: Any, k: int) -> jax.Array:
    """One category in {0..k−1} as an int32 scalar; concrete values are checked."""
    x = jnp.asarray(database)
    if x.size != 1:
        raise ValueError(f"database must be one category (shape () or (1,)); got {x.shape}")
    value = concrete(database)
    if value is not None and not (value == np.round(value) and 0 <= value.item() < k):
        raise ValueError(f"database must be an integer category in [0, {k}); got {database!r}")
    return x.reshape(()).astype(jnp.int32)


def _host_category(database: Any, k: int) -> int:
    if isinstance(database, jax.core.Tracer):
        raise ValueError("divergence needs concrete inputs")
    value = np.asarray(database, dtype=np.float64)
    if value.size != 1 or value.item() != round(value.item()) or not 0 <= value.item() < k:
        raise ValueError(f"input must be an integer category in [0, {k}); got {database!r}")
    return int(value.item())


def _point(database: Any) -> jax.Array:
    """One point of [0, 1] as a float scalar (clipped when traced)."""
    x = jnp.asarray(database)
    if x.size != 1:
        raise ValueError(f"database must be one point of [0, 1] (shape () or (1,)); got {x.shape}")
    value = concrete(database)
    if value is not None and not 0.0 <= value.item() <= 1.0:
        raise ValueError(f"database must lie in [0, 1]; got {database!r}")
    return jnp.clip(x.reshape(()).astype(float), 0.0, 1.0)


def _check_alpha(alpha: Any) -> None:
    check_range("alpha", alpha, low=0.0, low_open=False)


@pytree_dataclass
class KaryRandomizedResponse(Mechanism):
    """Warner's k-ary randomized response, α-LDP (003, Sec. 3; docs/methods.md §5).

    Args:
        alpha: privacy level α ≥ 0 (a pytree leaf).
        k: number of categories, at least 2 (static).

    ``sample`` returns int32 categories of shape ``(n,)`` (their own codes, alphabet k).
    """

    paper = _PAPER
    alpha: Any
    k: int = static_field()

    def __post_init__(self) -> None:
        _check_alpha(self.alpha)
        check_int("k", self.k, 2)

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is one integer category in ``[0, k)``."""
        _category(database, self.k)

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        x = _category(database, self.k)
        alpha = jnp.asarray(self.alpha)
        # e^α overflows float32 from α ≈ 89 (inf/inf: NaN, and no draw kept its category):
        # there, the same probability as 1/(1 + (k − 1)e^{−α}).
        e = jnp.exp(jnp.minimum(alpha, 80.0))
        keep_prob = jnp.where(
            alpha > 80.0, 1.0 / (1.0 + (self.k - 1) * jnp.exp(-alpha)), e / (e + self.k - 1)
        )
        key_keep, key_other = jax.random.split(key)
        keep = jax.random.bernoulli(key_keep, keep_prob, (n,))
        shift = jax.random.randint(key_other, (n,), 1, self.k)  # the default int
        x = x.astype(shift.dtype)
        other = (x + shift) % self.k  # uniform on ≠ x
        return jnp.where(keep, x, other).astype(jnp.int32)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Discrete: the k categories, which are their own codes."""
        return discrete(self.k, encoding="category")

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Categories 0 and 1 (all pairs of distinct categories are equivalent)."""
        return jnp.asarray(0, dtype=jnp.int32), jnp.asarray(1, dtype=jnp.int32)

    def log_pmf(self, database: Any) -> np.ndarray:
        """Exact log pmf over the k categories (host, float64)."""
        x = _host_category(database, self.k)
        alpha = scalar_param("alpha", self.alpha)
        log_norm = np.logaddexp(alpha, math.log(self.k - 1))
        log_pmf = np.full(self.k, -log_norm)
        log_pmf[x] = alpha - log_norm
        return log_pmf

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ`` by enumeration of the k outputs; ``D_∞ = α`` for distinct inputs."""
        lam = check_lam(lam)
        return _exact.renyi_from_logpmf(lam, self.log_pmf(x), self.log_pmf(x_prime))

    @property
    def epsilon(self) -> float | None:
        """The α-LDP level α (``None`` when it is traced)."""
        return param_value(self.alpha)


@pytree_dataclass
class OneHotRandomizedResponse(Mechanism):
    """Bitwise randomized response on the one-hot vector ``e_X`` (003's multinomial channel).

    Args:
        alpha: privacy level α ≥ 0 (a pytree leaf); each bit uses level α/2.
        k: number of categories (static), 2 ≤ k ≤ 30 so that outputs have int32 codes.

    ``sample`` returns int32 bits of shape ``(n, k)``; ``output().encode`` maps them to the
    little-endian binary number in ``[0, 2^k)``.
    """

    paper = _PAPER
    alpha: Any
    k: int = static_field()

    def __post_init__(self) -> None:
        _check_alpha(self.alpha)
        check_int("k", self.k, 2, 30)

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is one integer category in ``[0, k)``."""
        _category(database, self.k)

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        one_hot = jax.nn.one_hot(_category(database, self.k), self.k, dtype=jnp.bool_)
        flip_prob = jax.nn.sigmoid(-jnp.asarray(self.alpha) / 2.0)  # 1/(1 + e^{α/2})
        flip = _random.bernoulli(key, flip_prob, (n, self.k))
        return jnp.logical_xor(one_hot[None, :], flip).astype(jnp.int32)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Discrete: vectors in ``{0,1}^k``, coded as little-endian binary numbers (2^k codes)."""
        return binary_vector_output(self.k)

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Categories 0 and 1."""
        return jnp.asarray(0, dtype=jnp.int32), jnp.asarray(1, dtype=jnp.int32)

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ = 2 D_λ^{RR}(α/2)`` for distinct inputs (two independent bits differ)."""
        lam = check_lam(lam)
        a, b = _host_category(x, self.k), _host_category(x_prime, self.k)
        if a == b:
            return 0.0
        return 2.0 * _exact.rr_renyi(lam, scalar_param("alpha", self.alpha) / 2.0)

    @property
    def epsilon(self) -> float | None:
        """The α-LDP level α (``None`` when it is traced)."""
        return param_value(self.alpha)


@pytree_dataclass
class LaplaceHistogram(Mechanism):
    """Private histogram of 003: one-hot bin indicator plus Laplace noise of scale 2/α.

    Args:
        alpha: privacy level α > 0 (a pytree leaf).
        bins: number k ≥ 2 of equal bins of [0, 1] (static); X = 1 falls in the last bin.

    ``sample`` returns floats of shape ``(n, bins)`` (continuous, dimension ``bins``),
    reparameterized in α.
    """

    paper = _PAPER
    alpha: Any
    bins: int = static_field()

    def __post_init__(self) -> None:
        check_range("alpha", self.alpha, low=0.0)
        check_int("bins", self.bins, 2)

    def _bin(self, x: jax.Array) -> jax.Array:
        return jnp.clip(jnp.floor(x * self.bins), 0, self.bins - 1).astype(jnp.int32)

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is one point of [0, 1]."""
        _point(database)

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        indicator = jax.nn.one_hot(self._bin(_point(database)), self.bins)
        scale = 2.0 / jnp.asarray(self.alpha)  # Laplace(α/2) of 003 has scale 2/α
        return indicator[None, :] + scale * _random.laplace(key, (n, self.bins))

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Continuous, of dimension ``bins``."""
        return continuous(self.bins)

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Points 0 and 1 (first and last bins; any two distinct bins are equivalent)."""
        return jnp.asarray(0.0), jnp.asarray(1.0)

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ = 2 D_λ(Lap(1, 2/α) ‖ Lap(0, 2/α))`` for distinct bins, else 0."""
        lam = check_lam(lam)
        points = []
        for value in (x, x_prime):
            arr = np.asarray(value, dtype=np.float64)
            if arr.size != 1 or not 0.0 <= arr.item() <= 1.0:
                raise ValueError(f"inputs must be points of [0, 1]; got {value!r}")
            points.append(min(int(math.floor(arr.item() * self.bins)), self.bins - 1))
        if points[0] == points[1]:
            return 0.0
        scale = 2.0 / scalar_param("alpha", self.alpha)
        return 2.0 * _exact.laplace_renyi(lam, 1.0, scale)

    @property
    def epsilon(self) -> float | None:
        """The α-LDP level α (``None`` when it is traced)."""
        return param_value(self.alpha)
