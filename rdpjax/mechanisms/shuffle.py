"""Shuffled randomized response (paper 000, Sec. V, "Shuffle Model").

``Π∘A(x) = (R_{π(1)}(x_{π(1)}), …, R_{π(m)}(x_{π(m)}))`` with π a uniformly random permutation and
``R_i`` binary randomized response. A uniformly permuted bit vector is uniform among the
arrangements of its number of ones, so the count is a sufficient statistic: under x it is
``Σ_i Bern(p_i)`` with ``p_i = a`` where ``x_i = 1`` and ``1 − a`` where ``x_i = 0``
(``a = e^{ε0}/(1+e^{ε0})``): ``Bern(a) + Bin(m−1, 1−a)`` versus ``Bin(m, 1−a)`` on pair (21).

Exact divergence: enumeration of the two count pmfs (any pair in {0,1}^m). On pair (21) it equals
the closed form of 000 (Girgis et al., reproduced in 000), :func:`paper_closed_form`.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact
from rdpjax.mechanisms._sampling import uniform_arrangement
from rdpjax.mechanisms.base import Mechanism, OutputSpec, count_ones, discrete, pytree_dataclass
from rdpjax.mechanisms.checks import check_lam, check_range, param_value, scalar_param
from rdpjax.mechanisms.databases import paper_pair
from rdpjax.mechanisms.randomized_response import (
    _log_poisson_binomial_of_logs,
    binary_database,
    host_binary_database,
    randomized_response_bits,
)

__all__ = ["ShuffledRandomizedResponse", "paper_closed_form"]


@pytree_dataclass
class ShuffledRandomizedResponse(Mechanism):
    """Randomized response followed by a uniformly random shuffle (000; ε0 = 1.5, m = 10).

    Args:
        eps0: the local privacy level ε0 ≥ 0 (a pytree leaf).

    ``sample`` returns the shuffled vectors, int32 of shape ``(n, m)``; ``output(x).encode`` maps
    them to their number of ones in ``[0, m]`` (the sufficient statistic). The shuffle is sampled
    exactly in law as a uniform arrangement of the count (:func:`uniform_arrangement`), which costs
    n·m uniforms instead of n sorts.
    """

    paper = "Kutta, Askin, Dunsche, arXiv:2212.04739, Sec. V"
    eps0: Any

    def __post_init__(self) -> None:
        check_range("eps0", self.eps0, low=0.0, low_open=False)

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is a non-empty vector with entries in {0, 1}."""
        binary_database(database)

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        bits = binary_database(database)
        key_rr, key_shuffle = jax.random.split(key)
        ones = jnp.sum(randomized_response_bits(key_rr, bits, self.eps0, n), axis=1)
        return uniform_arrangement(key_shuffle, ones, bits.shape[0]).astype(jnp.int32)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Discrete: the number of ones, m + 1 codes (m: ``database``'s length, or the pair's)."""
        if database is None:
            database = self.reference_pair()[0]
        m = int(jnp.shape(database)[0])
        return discrete(m + 1, encoding="number of ones", encoder=count_ones, dim=m)

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Pair (21) of 000."""
        return paper_pair()

    def log_count_pmf(self, database: Any) -> np.ndarray:
        """Exact log pmf of the number of ones, shape ``(m + 1,)`` (host, float64)."""
        bits = host_binary_database(database)
        eps0 = scalar_param("eps0", self.eps0)
        # log a and log(1 − a) of a = 1/(1 + e^{−ε0}) without forming 1 − a, which cancels (its
        # D_∞ was above ε0 from ε0 ≈ 36, infinite from 37).
        log_a, log_b = -float(np.logaddexp(0.0, -eps0)), -float(np.logaddexp(0.0, eps0))
        return _log_poisson_binomial_of_logs(
            [(log_a, log_b) if b else (log_b, log_a) for b in bits]
        )

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ`` by enumeration of the count pmfs."""
        lam = check_lam(lam)
        log_p, log_q = self.log_count_pmf(x), self.log_count_pmf(x_prime)
        if log_p.shape != log_q.shape:
            raise ValueError("x and x_prime must have the same length")
        return _exact.renyi_from_logpmf(lam, log_p, log_q)

    @property
    def epsilon(self) -> float | None:
        """ε0, inherited from the local randomizer (shuffling is post-processing).

        Tight for replace-one neighbours: on pair (21) the all-ones count has likelihood ratio
        ``a/(1−a) = e^{ε0}``, so the privacy amplification of shuffling shows at finite λ only.
        """
        return param_value(self.eps0)


def paper_closed_form(lam: int, eps0: float, m: int) -> float:
    """The closed form of 000 (Shuffle Model) for pair (21), integer λ ≥ 2.

    ``1/(λ−1) log{ 1 + C(λ,2)(e^{ε0}−1)²/(m e^{ε0})
    + Σ_{j=3}^{λ} C(λ,j) ((e^{2ε0}−1)/(m e^{ε0}))^j E[(Z − m/(e^{ε0}+1))^j] }``,
    ``Z ~ Bin(m, 1/(e^{ε0}+1))``. Independent of the enumeration in :meth:`divergence`, used to
    check it.
    """
    from scipy.special import comb  # here, not at import: 0.2 s

    if int(lam) != lam or lam < 2:
        raise ValueError(f"lam must be an integer >= 2; got {lam!r}")
    lam = int(lam)
    e = math.exp(eps0)
    from scipy import stats  # here, not at import: scipy.stats alone costs 0.45 s of a CLI run

    z = np.arange(m + 1)
    pmf = stats.binom(m, 1.0 / (e + 1.0)).pmf(z)
    total = 1.0 + comb(lam, 2) * (e - 1.0) ** 2 / (m * e)
    for j in range(3, lam + 1):
        moment = float(np.sum(pmf * (z - m / (e + 1.0)) ** j))
        total += comb(lam, j) * ((e * e - 1.0) / (m * e)) ** j * moment
    return math.log(total) / (lam - 1)
