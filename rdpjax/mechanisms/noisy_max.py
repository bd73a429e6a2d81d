"""Report Noisy Max, a correct and a published incorrect variant (classic DP-testing benchmark).

The input ("database") is the vector ``q ∈ ℝ^k`` of query answers, each of sensitivity 1
(neighbouring databases change every answer by at most 1, in any direction). Noise of scale
``2/ε`` is added to each answer:

* ``output_kind="index"`` (correct): release ``argmax_i (q_i + η_i)``, ε-DP for Laplace noise
  (Dwork & Roth 2014, Claim 3.9, with the factor 2 needed for non-monotone queries) and for
  exponential noise (Ding et al. 2021, "The permute-and-flip mechanism is identical to report-
  noisy-max with exponential noise");
* ``output_kind="value"`` (incorrect; Laplace noise only): release the noisy maximum
  ``max_i (q_i + η_i)`` instead; ``noisy_max_v1b`` among the incorrect algorithms caught by
  StatDP (Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential Privacy",
  CCS 2018). Left of every ``q_i`` the density of the maximum is ``∝ e^{(kt − Σ_i q_i)/b}``
  exactly, so ``D_∞ ≥ (Σ_i q'_i − Σ_i q_i)/b``, up to ``kε/2`` (b = 2/ε), not ε.

Exact laws (1-D integrals, log-space Gauss–Legendre between the kinks at the ``q_i``):
``P(index = i) = ∫ f(t − q_i) Π_{j≠i} F(t − q_j) dt`` and the density of the maximum
``f_M(t) = Σ_i f(t − q_i) Π_{j≠i} F(t − q_j)``.
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
    continuous,
    discrete,
    pytree_dataclass,
    static_field,
)
from rdpjax.mechanisms.checks import (
    as_database,
    check_choice,
    check_lam,
    check_positive,
    finite_or_inf,
    host_database,
    param_value,
    scalar_param,
)

__all__ = ["ReportNoisyMax"]


@pytree_dataclass
class ReportNoisyMax(Mechanism):
    """Report Noisy Max with Laplace or exponential noise of scale ``2/ε``.

    Args:
        eps: the claimed privacy level ε > 0 (a pytree leaf).
        noise: ``"laplace"`` or ``"exponential"`` (static).
        output_kind: ``"index"`` (correct; int32 codes in [0, k)) or ``"value"`` (the published
            incorrect variant, Laplace noise only; floats), static.

    ``sample`` returns shape ``(n,)``.
    """

    paper = "Dwork & Roth 2014, Claim 3.9; Ding et al., CCS 2018 (incorrect variant)"
    eps: Any
    noise: str = static_field(default="laplace")
    output_kind: str = static_field(default="index")

    def __post_init__(self) -> None:
        check_positive("eps", self.eps)
        check_choice("noise", self.noise, ("laplace", "exponential"))
        check_choice("output_kind", self.output_kind, ("index", "value"))
        if self.output_kind == "value" and self.noise != "laplace":
            # With one-sided noise the density of the maximum vanishes polynomially at the edge
            # of its support, D_λ is infinite for most pairs and quadrature cannot certify it.
            raise ValueError('output_kind="value" is implemented for noise="laplace" only')

    @property
    def name(self) -> str:
        """``ReportNoisyMax[noise,output_kind]``, e.g. ``ReportNoisyMax[laplace,index]``."""
        return f"ReportNoisyMax[{self.noise},{self.output_kind}]"

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` (the k answers) is a non-empty 1-D array."""
        as_database(database, ndims=(1,))

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        q = as_database(database, ndims=(1,))
        scale = 2.0 / jnp.asarray(self.eps)
        shape = (n, q.shape[0])
        if self.noise == "laplace":
            eta = _random.laplace(key, shape)
        else:
            eta = _random.exponential(key, shape)
        noisy = q[None, :] + scale * eta
        if self.output_kind == "index":
            return jnp.argmax(noisy, axis=1).astype(jnp.int32)
        return jnp.max(noisy, axis=1)

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """Value output: continuous scalars; index output: discrete, the k indices as codes."""
        if self.output_kind == "value":
            return continuous(1)
        k = int(jnp.shape(self.reference_pair()[0] if database is None else database)[0])
        return discrete(k, encoding="index of the noisy maximum")

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """``q = (0, …, 0, 1)``, ``q' = (1, …, 1, 0)``, k = 10: every answer moves by 1.

        Index output: the last query goes from likely winner to loser (``D_∞ ≈ 0.99 ε``). Value
        output: ``D_∞ = (Σ q' − Σ q)/b = 4ε`` from the left tail, and ``D_5 ≈ 2.4 ε`` already.
        """
        q = jnp.zeros(10).at[-1].set(1.0)
        return q, 1.0 - q

    # ---------------------------------------------------------------------------------------
    # Exact laws (host, float64).

    def _nodes(self, *answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b = 2.0 / scalar_param("eps", self.eps)
        all_q = np.concatenate(answers)
        lo = all_q.min() - (0.0 if self.noise == "exponential" else 80.0 * b)
        hi = all_q.max() + 80.0 * b
        return _exact.quadrature_nodes(lo, hi, breakpoints=all_q, max_width=b / 4.0)

    def _log_pdf_cdf(self, t: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log f(t − q_i)`` and ``log F(t − q_i)``, shape (k, len(t))."""
        b = 2.0 / scalar_param("eps", self.eps)
        u = t[None, :] - q[:, None]
        if self.noise == "laplace":
            return _exact.log_laplace_pdf(u, b), _exact.log_laplace_cdf(u, b)
        with np.errstate(divide="ignore"):
            log_pdf = np.where(u >= 0, -u / b - math.log(b), -np.inf)
            log_cdf = np.where(u > 0, np.log(-np.expm1(-np.maximum(u, 1e-300) / b)), -np.inf)
        return log_pdf, log_cdf

    def _log_terms(self, t: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``log f(t − q_i) + Σ_{j≠i} log F(t − q_j)``, shape (k, len(t))."""
        log_pdf, log_cdf = self._log_pdf_cdf(t, q)
        others = np.stack([np.sum(np.delete(log_cdf, i, axis=0), axis=0) for i in range(q.size)])
        return log_pdf + others

    def log_pmf(self, database: Any) -> np.ndarray:
        """Exact log P(index = i), shape (k,)."""
        from scipy.special import logsumexp  # here, not at import: 0.2 s

        q = host_database(database, ndims=(1,))
        t, log_w = self._nodes(q)
        return logsumexp(self._log_terms(t, q) + log_w[None, :], axis=1)

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float:
        """Exact ``D_λ`` (index: enumeration; value: quadrature of ``f_M``).

        ``λ = ∞`` for the value output is the sup of the log density ratio over the quadrature
        nodes and its limit as ``t → ∞`` (``log Σ e^{q_i/b} / Σ e^{q'_i/b}``).
        """
        from scipy.special import logsumexp  # here, not at import: 0.2 s

        lam = check_lam(lam)
        p, q = host_database(x, ndims=(1,)), host_database(x_prime, ndims=(1,))
        if p.shape != q.shape:
            raise ValueError(f"x and x_prime must have the same shape; got {p.shape}, {q.shape}")
        if self.output_kind == "index":
            return _exact.renyi_from_logpmf(lam, self.log_pmf(p), self.log_pmf(q))
        t, log_w = self._nodes(p, q)
        log_fp = logsumexp(self._log_terms(t, p), axis=0)
        log_fq = logsumexp(self._log_terms(t, q), axis=0)
        support = log_fp > -np.inf
        if np.any(log_fq[support] == -np.inf):
            return math.inf
        if math.isinf(lam):
            b = 2.0 / scalar_param("eps", self.eps)
            tail = float(logsumexp(p / b) - logsumexp(q / b))
            grid_sup = float(np.max(log_fp[support] - log_fq[support]))
            return finite_or_inf(max(grid_sup, tail), "D_inf")
        log_i = logsumexp(lam * log_fp[support] + (1 - lam) * log_fq[support] + log_w[support])
        return finite_or_inf(float(log_i) / (lam - 1), "noisy-max divergence")

    @property
    def epsilon(self) -> float | None:
        """The claimed ε (true for the index output, false for the value output)."""
        return param_value(self.eps)

    @property
    def claim_holds(self) -> bool:
        """``True`` for the index output; the value output's ε claim is false."""
        return self.output_kind == "index"
