"""The orthogonal-series sampler of paper 003 (Duchi, Jordan, Wainwright, arXiv:1305.6000, (20)).

Input X ∈ [0, 1]; trigonometric basis ``φ_1 = 1``, ``φ_{2j} = √2 cos(2πjt)``,
``φ_{2j+1} = √2 sin(2πjt)``, bound ``B0 = √2``; ``τ_j = φ_j(X)``, j = 1..k. Strategy (20):

1. ``τ̃_j ∈ {−B0, +B0}`` independently with ``P(+B0) = 1/2 + τ_j/(2B0)``;
2. ``T ~ Bernoulli(π)``, ``π = e^α/(e^α + 1)``;
3. T = 1: Z uniform on ``{z ∈ {−B, B}^k : ⟨z, τ̃⟩ > 0}``; T = 0: uniform on ``{⟨z, τ̃⟩ ≤ 0}``,

with ``B = B0 √k (e^α+1) / (c_k (e^α−1))``, ``c_k = √k C(k−1, ⌊k/2⌋) / 2^{k−1}``, so that
``E[Z | X] = (φ_1(X), …, φ_k(X))`` and the estimator (22) is a plain mean.

Ties (docs/methods.md §5, derived). ``⟨z, τ̃⟩`` only depends on the number c of coordinates where the
signs of z and τ̃ agree (``⟨z, τ̃⟩ > 0 ⇔ c > k/2``). For even k the literal split "> 0 vs ≤ 0"
gives the two sides different sizes and a likelihood ratio up to ``e^α N₋/N₊ > e^α`` given τ̃
(3e^α for k = 2): the published form (``ties="literal"``) is **not** α-LDP for even k (and, with
the constant c_k above, not unbiased either). ``ties="split"`` gives each tie half weight on each
side: both sides weigh ``2^{k−1}``, ratios stay within ``e^α``, and ``E[Z | X] = φ(X)`` for every
k (checked by enumeration in the tests). For odd k there are no ties and the two agree.

Sampler: exact and vectorized, no rejection loop: draw c from its law given T (weights
``C(k, c) w_T(c)``) by inverse CDF, then which coordinates agree uniformly among the
``C(k, c)`` choices. This is the law of the rejection sampler of 003 (uniform sign vectors kept
when on the chosen side), at O(k) uniforms per sample.

Exact divergence: ``P(z | X) = Σ_c P(c agreements | z, X) h(c)`` with the agreement count
Poisson-binomial given z and ``h(c) = π w_1(c)/W_1 + (1−π) w_0(c)/W_0``; enumeration over the
``2^k`` outputs, O(2^k k²), k ≤ 16.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact, _random
from rdpjax.mechanisms._sampling import uniform_arrangement
from rdpjax.mechanisms.base import (
    Mechanism,
    OutputSpec,
    binary_vector_output,
    pytree_dataclass,
    static_field,
)
from rdpjax.mechanisms.checks import (
    check_choice,
    check_int,
    check_lam,
    check_range,
    concrete,
    param_value,
    scalar_param,
)

__all__ = ["OrthogonalSeries", "trigonometric_basis"]

B0 = math.sqrt(2.0)
_MAX_EXACT_K = 16
_PAIR_GRID = 41  # reference pair searched on {0, 1/40, …, 1}


def trigonometric_basis(x: Any, k: int, xp=jnp) -> Any:
    """``(φ_1(x), …, φ_k(x))``: ``1, √2 cos(2πx), √2 sin(2πx), √2 cos(4πx), …`` (003, Sec. 4)."""
    index = np.arange(1, k + 1)
    freq = xp.asarray(index // 2, dtype=float)  # j for φ_{2j} and φ_{2j+1}
    x = xp.asarray(x)
    if x.ndim > 1:  # x of shape (..., 1): the frequencies along its last axis, ranks explicit
        freq = freq.reshape((1,) * (x.ndim - 1) + freq.shape)
    angle = 2.0 * math.pi * freq * x
    trig = xp.where(xp.asarray(index % 2 == 0), xp.cos(angle), xp.sin(angle))
    return xp.where(xp.asarray(index == 1), 1.0, B0 * trig)


def _side_weights(k: int, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """``w_1(c)``, ``w_0(c)``: weight of an output with c agreeing signs on the T = 1 / 0 side."""
    c = np.arange(k + 1)
    tie = 0.5 if ties == "split" else 0.0
    w1 = np.where(2 * c > k, 1.0, np.where(2 * c == k, tie, 0.0))
    return w1, 1.0 - w1


@functools.lru_cache(maxsize=64)
def _count_cdfs(k: int, ties: str) -> np.ndarray:
    """CDFs of the agreement count given T = 0 and T = 1, shape (2, k + 1), float32-safe."""
    from scipy.special import comb  # here, not at import: 0.2 s

    sizes = comb(k, np.arange(k + 1))
    cdfs = []
    for w in reversed(_side_weights(k, ties)):  # T = 0 first, then T = 1
        probs = sizes * w / np.sum(sizes * w)
        cdf = np.cumsum(probs)
        cdf[np.flatnonzero(probs)[-1] :] = 1.0  # zero-probability tail never drawn
        cdfs.append(cdf)
    return np.asarray(cdfs, dtype=np.float32)


@pytree_dataclass
class OrthogonalSeries(Mechanism):
    """The α-LDP orthogonal-series sampler (20) of 003.

    Args:
        alpha: privacy level α > 0 (a pytree leaf).
        k: number of basis functions (static), 1 ≤ k ≤ 30.
        ties: ``"split"`` (default; ties weigh ½ on each side, α-LDP for every k) or
            ``"literal"`` (the published "> 0 vs ≤ 0", not α-LDP for even k).

    ``sample`` returns int32 sign bits of shape ``(n, k)`` (1 ↔ +B); :meth:`values` maps them to
    the vectors Z ∈ {−B, B}^k; ``output().encode`` to little-endian binary numbers in [0, 2^k).
    """

    paper = "Duchi, Jordan, Wainwright, arXiv:1305.6000, eq. (20)"
    alpha: Any
    k: int = static_field()
    ties: str = static_field(default="split")

    def __post_init__(self) -> None:
        check_range("alpha", self.alpha, low=0.0)
        check_int("k", self.k, 1, 30)
        check_choice("ties", self.ties, ("split", "literal"))

    @property
    def name(self) -> str:
        """``OrthogonalSeries[ties]``, e.g. ``OrthogonalSeries[split]``."""
        return f"OrthogonalSeries[{self.ties}]"

    @property
    def bound(self) -> Any:
        """``B = B0 √k (e^α+1) / (c_k (e^α−1))`` (003, below (20))."""
        from scipy.special import comb  # here, not at import: 0.2 s

        k = self.k
        c_k = math.sqrt(k) * comb(k - 1, k // 2, exact=True) / 2 ** (k - 1)
        alpha = jnp.asarray(self.alpha)
        return B0 * math.sqrt(k) / c_k / jnp.tanh(alpha / 2.0)  # (e^α+1)/(e^α−1) = coth(α/2)

    def values(self, bits: jax.Array) -> jax.Array:
        """Sign bits to the privatized vectors ``Z ∈ {−B, B}^k``."""
        return self.bound * (2.0 * jnp.asarray(bits, dtype=float) - 1.0)

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is one point of [0, 1]."""
        x = jnp.asarray(database)
        if x.size != 1:
            raise ValueError(f"database must be one point of [0, 1]; got shape {x.shape}")
        value = concrete(database)
        if value is not None and not 0.0 <= value.item() <= 1.0:
            raise ValueError(f"database must lie in [0, 1]; got {database!r}")

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        self.check_database(database)
        x = jnp.asarray(database)
        tau = trigonometric_basis(x.reshape(()).astype(float), self.k)
        key_tau, key_t, key_c, key_agree = jax.random.split(key, 4)
        p_tau = (0.5 + tau / (2.0 * B0))[None]  # (1, k)
        sign_tau = _random.bernoulli(key_tau, p_tau, (n, self.k))  # step 1
        pi = jax.nn.sigmoid(jnp.asarray(self.alpha))  # e^α/(e^α+1)
        side = jax.random.bernoulli(key_t, pi, (n,)).astype(jnp.int32)  # step 2
        cdf = jnp.asarray(_count_cdfs(self.k, self.ties))[side]  # (n, k+1)
        u = _random.uniform(key_c, (n, 1))
        agreements = jnp.sum(u >= cdf[:, :-1], axis=1)  # inverse CDF of the count, step 3
        agree = uniform_arrangement(key_agree, agreements, self.k)
        return jnp.where(agree, sign_tau, ~sign_tau).astype(jnp.int32)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Discrete: the k sign bits, coded as little-endian binary numbers in [0, 2^k)."""
        return binary_vector_output(self.k)

    def log_pmf(self, database: Any) -> np.ndarray:
        """Exact log pmf of the sign bits, indexed by their binary code (host, float64)."""
        from scipy.special import comb  # here, not at import: 0.2 s

        if self.k > _MAX_EXACT_K:
            raise ValueError(f"exact pmf needs k <= {_MAX_EXACT_K}; got k={self.k}")
        x = np.asarray(database, dtype=np.float64)
        if x.size != 1 or not 0.0 <= x.item() <= 1.0:
            raise ValueError(f"input must be one point of [0, 1]; got {database!r}")
        alpha = scalar_param("alpha", self.alpha)
        tau = trigonometric_basis(x.item(), self.k, xp=np)
        p_plus = np.clip(0.5 + tau / (2.0 * B0), 0.0, 1.0)
        codes = np.arange(2**self.k)
        bits = (codes[:, None] >> np.arange(self.k)[None, :]) & 1  # little-endian, as encode
        agree_prob = np.where(bits == 1, p_plus, 1.0 - p_plus)
        law = np.zeros((codes.size, self.k + 1))
        law[:, 0] = 1.0
        for j in range(self.k):  # Poisson-binomial law of the agreement count given z
            q = agree_prob[:, j : j + 1]
            law = np.concatenate([law[:, :1] * (1 - q), law[:, 1:] * (1 - q) + law[:, :-1] * q], 1)
        sizes = comb(self.k, np.arange(self.k + 1))
        w1, w0 = _side_weights(self.k, self.ties)
        pi = 1.0 / (1.0 + math.exp(-alpha))
        h = pi * w1 / np.sum(sizes * w1) + (1.0 - pi) * w0 / np.sum(sizes * w0)
        with np.errstate(divide="ignore"):
            return np.log(law @ h)

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float | None:
        """Exact ``D_λ`` by enumeration of the 2^k outputs; ``None`` for k > 16."""
        lam = check_lam(lam)
        if self.k > _MAX_EXACT_K:
            return None
        return _exact.renyi_from_logpmf(lam, self.log_pmf(x), self.log_pmf(x_prime))

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """The ordered pair of inputs on {0, 1/40, …, 1} with the largest exact D_∞.

        For k = 2 it is (0, 1/2) in both tie modes (φ_2 flips sign); for k > 10 the search is
        skipped and (0, 1/2) is returned.
        """
        if self.k > 10:
            return jnp.asarray(0.0), jnp.asarray(0.5)
        alpha = scalar_param("alpha", self.alpha)
        i, j = _worst_pair(self.k, self.ties, alpha)
        return jnp.asarray(i / (_PAIR_GRID - 1)), jnp.asarray(j / (_PAIR_GRID - 1))

    @property
    def epsilon(self) -> float | None:
        """α: the level the sampler is designed (and, for ``ties="literal"``, claimed) to meet."""
        return param_value(self.alpha)

    @property
    def claim_holds(self) -> bool:
        """``False`` only for ``ties="literal"`` with an even k, which is not α-LDP."""
        return self.ties == "split" or self.k % 2 == 1


@functools.lru_cache(maxsize=64)
def _worst_pair(k: int, ties: str, alpha: float) -> tuple[int, int]:
    mech = OrthogonalSeries(alpha, k, ties)
    grid = np.linspace(0.0, 1.0, _PAIR_GRID)
    log_p = np.array([mech.log_pmf(g) for g in grid])
    ratio = np.max(log_p[:, None, :] - log_p[None, :, :], axis=2)
    i, j = np.unravel_index(np.argmax(ratio), ratio.shape)
    return int(i), int(j)
