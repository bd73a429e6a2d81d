"""Binary randomized response on a database in {0,1}^m (paper 000, Sec. V, "Randomized Response").

Each entry is kept with probability ``a = e^{ε0}/(1+e^{ε0})`` and flipped otherwise, independently;
the output is the whole privatized vector ``(R_1(x_1), …, R_m(x_m)) ∈ {0,1}^m``.

Exact divergence: the coordinates are independent, so D_λ adds up over the ``k`` coordinates where
x and x' differ: ``D_λ = k · 1/(λ−1) log{ a^λ(1−a)^{1−λ} + (1−a)^λ a^{1−λ} }`` (the closed form of
000 for k = 1, pair (21)); ``D_∞ = k ε0``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact, _random
from rdpjax.mechanisms.base import Mechanism, OutputSpec, binary_vector_output, pytree_dataclass
from rdpjax.mechanisms.checks import (
    as_database,
    check_lam,
    check_range,
    concrete,
    host_database,
    param_value,
    scalar_param,
)
from rdpjax.mechanisms.databases import paper_pair

__all__ = ["RandomizedResponse", "binary_database", "randomized_response_bits"]


def binary_database(database: Any) -> jax.Array:
    """A database in {0,1}^m as a boolean vector; concrete values other than 0/1 are rejected."""
    x = as_database(database, ndims=(1,))
    values = concrete(database)
    if values is not None and not np.all((values == 0) | (values == 1)):
        raise ValueError("database must have entries in {0, 1}")
    # A concrete database is compared on the host (an eager comparison compiles a program).
    return x > 0.5 if values is None else jax.device_put(values > 0.5)


def host_binary_database(database: Any) -> np.ndarray:
    x = host_database(database, ndims=(1,))
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("database must have entries in {0, 1}")
    return x.astype(bool)


def randomized_response_bits(key: jax.Array, bits: jax.Array, eps0: Any, n: int) -> jax.Array:
    """``n`` independent randomized-response copies of ``bits``: int32, shape ``(n, m)``."""
    flip = _random.bernoulli(key, jax.nn.sigmoid(-jnp.asarray(eps0)), (n, bits.shape[0]))
    return jnp.logical_xor(bits[None, :], flip).astype(jnp.int32)  # R_i(x_i) of 000


@pytree_dataclass
class RandomizedResponse(Mechanism):
    """Binary randomized response, output the vector in {0,1}^m (000; ε0 = 1.5 in the paper).

    Args:
        eps0: the local privacy level ε0 ≥ 0 (a pytree leaf).

    ``sample`` returns int32 bits of shape ``(n, m)``; ``output(x).encode`` maps them to the
    little-endian binary number ``Σ_j b_j 2^j`` in ``[0, 2^m)`` (m ≤ 30).
    """

    paper = "Kutta, Askin, Dunsche, arXiv:2212.04739, Sec. V"
    eps0: Any

    def __post_init__(self) -> None:
        check_range("eps0", self.eps0, low=0.0, low_open=False)

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is a non-empty vector with entries in {0, 1}."""
        binary_database(database)

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        return randomized_response_bits(key, binary_database(database), self.eps0, n)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Discrete: {0,1}^m vectors as binary numbers, m the length of ``database`` (or x)."""
        if database is None:
            database = self.reference_pair()[0]
        return binary_vector_output(int(jnp.shape(database)[0]))

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Pair (21) of 000 (entries in {0, 1})."""
        return paper_pair()

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ = k · D_λ^{RR}(ε0)``, k = number of differing entries."""
        lam = check_lam(lam)
        a, b = host_binary_database(x), host_binary_database(x_prime)
        if a.shape != b.shape:
            raise ValueError(f"x and x_prime must have the same shape; got {a.shape}, {b.shape}")
        differing = int(np.sum(a != b))
        if differing == 0:
            return 0.0
        return differing * _exact.rr_renyi(lam, scalar_param("eps0", self.eps0))

    @property
    def epsilon(self) -> float | None:
        """ε0: each entry is ε0-LDP, hence the vector is ε0-DP for replace-one neighbours."""
        return param_value(self.eps0)


def _log_poisson_binomial(probs: np.ndarray) -> np.ndarray:
    """Log pmf of ``Σ_i Bern(probs_i)``, by log-space convolution (O(m²))."""
    logs = [
        ((math.log(p) if p > 0 else -np.inf), (math.log1p(-p) if p < 1 else -np.inf)) for p in probs
    ]
    return _log_poisson_binomial_of_logs(logs)


def _log_poisson_binomial_of_logs(logs: Sequence[tuple[float, float]]) -> np.ndarray:
    """Log pmf of ``Σ_i Bern(p_i)`` from each ``(log p_i, log(1 − p_i))``.

    Given in logs, a p_i within float64's spacing of 1 keeps its ``log(1 − p_i)``: from p_i
    itself, ``1 − p_i`` cancels (shuffled randomized response at ε0 ≥ 36).
    """
    log_pmf = np.zeros(1)
    for log_one, log_zero in logs:
        nxt = np.full(log_pmf.size + 1, -np.inf)
        nxt[:-1] = log_pmf + log_zero
        nxt[1:] = np.logaddexp(nxt[1:], log_pmf + log_one)
        log_pmf = nxt
    return log_pmf
