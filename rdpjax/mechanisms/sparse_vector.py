"""The Sparse Vector Technique, correct and published incorrect variants (Lyu, Su, Li 2017).

The input ("database") is the vector ``q ∈ ℝ^k`` of query answers, each of sensitivity Δ = 1.
All variants compare noisy answers with a noisy threshold, ``q_i + ν_i ≥ T + ρ``, and output ⊤
(1) or ⊥ (0) per query, in order. Variants (Lyu, Su, Li, "Understanding the Sparse Vector
Technique for Differential Privacy", PVLDB 10(6), 2017, arXiv:1603.01699, Fig. 1 / Table 1; as
implemented in StatDP by Ding et al., CCS 2018, with ε1 the threshold's share of ε):

========================  =================  ==================  =========  ==================
variant                   ρ scale            ν scale             stops      real privacy
========================  =================  ==================  =========  ==================
``"lyu"`` (Alg. 1)        2/ε (ε1 = ε/2)     4c/ε                after c ⊤  ε (correct)
``"lee_clifton"`` (Alg.4) 4/ε (ε1 = ε/4)     4/(3ε)              after c ⊤  (1+6c)ε/4
``"stoddard"`` (Alg. 5)   2/ε                none (ν = 0)        never      ∞
``"chen"`` (Alg. 6)       2/ε                2/ε                 never      ∞
========================  =================  ==================  =========  ==================

Output encoding: the vector of ⊤ indicators in ``{0,1}^k``, with zeros after the c-th ⊤ for the
variants that stop; this is a bijection with the sequence the algorithm prints (a vector with c
ones means "stopped after the last one"). ``output().encode`` gives little-endian binary numbers.

Exact pmf (any pair, k ≤ 14): given ρ = r the comparisons are independent, so
``P(v) = ∫ f_ρ(r) Π_{i considered} [v_i ? P(ν ≥ T + r − q_i) : P(ν < T + r − q_i)] dr``,
a 1-D integral evaluated in log space by Gauss–Legendre between the kinks ``r = q_i − T`` and 0
(for ν = 0 the factors are indicators with jumps at the kinks, integrated exactly). Enumeration
over the patterns then gives D_λ and D_∞.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact, _random
from rdpjax.mechanisms.base import (
    Mechanism,
    OutputSpec,
    binary_vector_output,
    pytree_dataclass,
    static_field,
)
from rdpjax.mechanisms.checks import (
    as_database,
    check_choice,
    check_int,
    check_lam,
    check_positive,
    check_range,
    host_database,
    param_value,
    scalar_param,
)

__all__ = ["SparseVector", "VARIANTS"]

#: variant -> (threshold-noise scale · ε, query-noise scale · ε / c-factor, stops after c ⊤?)
VARIANTS: dict[str, tuple[float, str, bool]] = {
    "lyu": (2.0, "4c", True),
    "lee_clifton": (4.0, "4/3", True),
    "stoddard": (2.0, "0", False),
    "chen": (2.0, "2", False),
}
_MAX_EXACT_K = 14


@pytree_dataclass
class SparseVector(Mechanism):
    """Sparse Vector Technique with Laplace noise; see the module table for the variants.

    Args:
        eps: the claimed privacy level ε > 0 (a pytree leaf).
        threshold: the threshold T (a pytree leaf).
        cutoff: c ≥ 1, the number of ⊤ after which the stopping variants halt (static).
        variant: ``"lyu"`` (correct) or one of the incorrect ``"lee_clifton"``, ``"stoddard"``,
            ``"chen"`` (static).

    ``sample`` returns int32 indicators of shape ``(n, k)``, vectorized over samples and queries
    (a cumulative sum implements the stop).
    """

    paper = "Lyu, Su, Li, PVLDB 2017 (arXiv:1603.01699)"
    eps: Any
    threshold: Any = 0.5
    cutoff: int = static_field(default=1)
    variant: str = static_field(default="lyu")

    def __post_init__(self) -> None:
        check_positive("eps", self.eps)
        check_range("threshold", self.threshold)
        check_int("cutoff", self.cutoff, 1)
        check_choice("variant", self.variant, tuple(VARIANTS))

    @property
    def name(self) -> str:
        """``SparseVector[variant]``, e.g. ``SparseVector[lyu]``."""
        return f"SparseVector[{self.variant}]"

    @property
    def stops(self) -> bool:
        """Whether the variant halts after ``cutoff`` ⊤ (``lyu``, ``lee_clifton``)."""
        return VARIANTS[self.variant][2]

    def noise_factors(self) -> tuple[float, float]:
        """``(ε · scale of ρ, ε · scale of ν)`` for this variant (0: no query noise)."""
        rho_factor, nu_rule, _ = VARIANTS[self.variant]
        nu_factor = {"4c": 4.0 * self.cutoff, "4/3": 4.0 / 3.0, "0": 0.0, "2": 2.0}[nu_rule]
        return rho_factor, nu_factor

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` (the k answers) is a non-empty 1-D array."""
        as_database(database, ndims=(1,))

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        q = as_database(database, ndims=(1,))
        rho_factor, nu_factor = self.noise_factors()
        eps = jnp.asarray(self.eps)
        key_rho, key_nu = jax.random.split(key)
        rho = rho_factor / eps * _random.laplace(key_rho, (n, 1))
        noisy = q[None, :]
        if nu_factor > 0:
            noisy = noisy + nu_factor / eps * _random.laplace(key_nu, (n, q.shape[0]))
        above = noisy >= jnp.asarray(self.threshold) + rho
        if not self.stops:
            return above.astype(jnp.int32)
        count = jnp.cumsum(above, axis=1)  # an int array (the default int)
        before = count - above.astype(count.dtype)  # number of ⊤ strictly before query i
        return (above & (before < self.cutoff)).astype(jnp.int32)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Discrete: the k indicators, coded as little-endian binary numbers in [0, 2^k)."""
        k = int(jnp.shape(self.reference_pair()[0] if database is None else database)[0])
        return binary_vector_output(k)

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """``q = (0, …, 0, 1, …, 1)``, ``q' = 1 − q`` with k = 10 (five of each).

        The StatDP "all differ" pair; with the default threshold T = 0.5 the output ⊥⊥⊥⊥⊥⊤…
        is likely under q and unlikely under q'. The non-stopping variants pay for every
        differing comparison (``stoddard``: D_∞ = ∞; ``chen``: D_∞ > ε); the correct ``lyu``
        stays below ε. ``lee_clifton`` needs another pair: :meth:`lee_clifton_pair`.
        """
        if self.variant == "lee_clifton":
            return self.lee_clifton_pair()
        q = jnp.concatenate([jnp.zeros(5), jnp.ones(5)])
        return q, 1.0 - q

    @staticmethod
    def lee_clifton_pair() -> tuple[jax.Array, jax.Array]:
        """A pair on which the Lee–Clifton variant (c = 1) loses more than ε."""
        q = jnp.concatenate([jnp.zeros(9), jnp.ones(1)])
        return q, 1.0 - q

    # ---------------------------------------------------------------------------------------
    # Exact law (host, float64).

    def _patterns(self, k: int) -> np.ndarray:
        """All possible outputs, shape (P, k); entries 1 (⊤), 0 (⊥), −1 (not reached)."""
        rows = []
        for bits in itertools.product((0, 1), repeat=k):
            row = np.array(bits)
            if self.stops:
                ones = np.flatnonzero(row)
                if ones.size > self.cutoff:
                    continue
                if ones.size == self.cutoff:
                    row = row.copy()
                    row[ones[-1] + 1 :] = -1
            rows.append(row)
        return np.array(rows)

    def log_pmf(self, database: Any) -> np.ndarray:
        """Exact log-probabilities indexed by the binary code of the output, shape (2^k,)."""
        q = host_database(database, ndims=(1,))
        if q.size > _MAX_EXACT_K:
            raise ValueError(f"exact pmf needs k <= {_MAX_EXACT_K} queries; got {q.size}")
        eps = scalar_param("eps", self.eps)
        threshold = scalar_param("threshold", self.threshold)
        return _log_pmf(tuple(q.tolist()), eps, threshold, self.cutoff, self.variant).copy()

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float | None:
        """Exact ``D_λ`` by enumeration of the outputs; ``None`` for k > 14 queries."""
        lam = check_lam(lam)
        a, b = host_database(x, ndims=(1,)), host_database(x_prime, ndims=(1,))
        if a.shape != b.shape:
            raise ValueError(f"x and x_prime must have the same shape; got {a.shape}, {b.shape}")
        if a.size > _MAX_EXACT_K:
            return None
        return _exact.renyi_from_logpmf(lam, self.log_pmf(x), self.log_pmf(x_prime))

    @property
    def epsilon(self) -> float | None:
        """The claimed ε (true only for ``variant="lyu"``)."""
        return param_value(self.eps)

    @property
    def claim_holds(self) -> bool:
        """``True`` only for ``variant="lyu"``; the other variants' ε claims are false."""
        return self.variant == "lyu"


@functools.lru_cache(maxsize=32)
def _log_pmf(
    answers: tuple[float, ...], eps: float, threshold: float, cutoff: int, variant: str
) -> np.ndarray:
    """Cached body of :meth:`SparseVector.log_pmf` (hashable host arguments)."""
    from scipy.special import logsumexp  # here, not at import: 0.2 s

    mech = SparseVector(eps, threshold, cutoff, variant)
    q = np.asarray(answers)
    k = q.size
    rho_scale, nu_scale = (factor / eps for factor in mech.noise_factors())
    kinks = q - threshold
    width = min(rho_scale, nu_scale) if nu_scale > 0 else rho_scale
    r, log_w = _exact.quadrature_nodes(
        kinks.min() - 60.0 * rho_scale,
        kinks.max() + 60.0 * rho_scale,
        breakpoints=[*kinks, 0.0],
        max_width=width,
    )
    u = threshold + r[None, :] - q[:, None]  # ⊤ iff ν ≥ u
    if nu_scale > 0:
        log_top, log_bot = _exact.log_laplace_sf(u, nu_scale), _exact.log_laplace_cdf(u, nu_scale)
    else:
        with np.errstate(divide="ignore"):
            log_top, log_bot = np.log(u <= 0), np.log(u > 0)
    patterns = mech._patterns(k)
    top, bot = (patterns == 1).astype(float), (patterns == 0).astype(float)
    finite = top @ np.where(np.isfinite(log_top), log_top, 0.0)
    finite += bot @ np.where(np.isfinite(log_bot), log_bot, 0.0)
    impossible = (top @ np.isinf(log_top) + bot @ np.isinf(log_bot)) > 0
    log_integrand = np.where(impossible, -np.inf, finite)
    log_integrand += _exact.log_laplace_pdf(r, rho_scale)[None, :] + log_w[None, :]
    log_prob = logsumexp(log_integrand, axis=1)
    codes = np.sum(np.maximum(patterns, 0) << np.arange(k), axis=1)
    out = np.full(2**k, -np.inf)
    out[codes] = log_prob
    out.setflags(write=False)
    return out
