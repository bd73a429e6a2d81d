"""Poisson subsampling of an additive-noise mechanism (paper 000, Sec. V, "Poisson Subsampling").

``Γ`` keeps each entry ``x_i`` independently with probability γ (000, eq. (22)); the additive
mechanism then releases the sum of the kept entries plus its noise:
``A∘Γ(x) = Σ_i Z_i x_i + Y``, ``Z_i ~ Bern(γ)`` i.i.d.

Exact divergence. For the pair (21) (``x'`` = 0, ``x`` one non-zero entry ``r``):
``p = (1−γ) f_0 + γ f_r``, ``q = f_0``, and expanding ``E_q[(1−γ+γ f_r/f_0)^λ]`` binomially
gives, for integer λ (docs/methods.md §3, note on subsampling)

    D_λ = 1/(λ−1) log{ (1−γ)^{λ−1}(λγ−γ+1) + Σ_{j=2}^{λ} C(λ,j)(1−γ)^{λ−j} γ^j e^{(j−1) ε0(j)} }

with ``ε0(j) = D_j(f_r ‖ f_0)`` the base mechanism's divergence **at order j**. 000 prints
``ε0(λ)`` in the exponent; that version does not match quadrature nor the paper's own "more than
70% reduction" claim, so we use ``ε0(j)``. Other orders and other pairs (scalar statistic): the two
laws are finite mixtures of shifted noise densities (the law of ``Σ Z_i x_i`` enumerated exactly),
and D_λ is their log-space quadrature.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax.mechanisms import _exact, _random
from rdpjax.mechanisms.additive import AdditiveNoise, Gaussian, Laplace
from rdpjax.mechanisms.base import Mechanism, OutputSpec, pytree_dataclass
from rdpjax.mechanisms.checks import (
    as_database,
    check_lam,
    check_range,
    host_database,
    param_value,
    scalar_param,
)

__all__ = ["PoissonSubsampled"]


@pytree_dataclass
class PoissonSubsampled(Mechanism):
    """Poisson-subsampled Laplace or Gaussian mechanism (000, eq. (22); γ = 0.5 in the paper).

    Args:
        base: a :class:`Laplace` or :class:`Gaussian` mechanism (a pytree child: its scale is a
            leaf too).
        rate: the inclusion probability γ ∈ (0, 1] (a pytree leaf).

    Cost of ``sample``: n·m Bernoulli draws plus n noise draws.
    """

    paper = "Kutta, Askin, Dunsche, arXiv:2212.04739, Sec. V"
    base: AdditiveNoise
    rate: Any

    def __post_init__(self) -> None:
        if not isinstance(self.base, AdditiveNoise):
            raise ValueError(f"base must be a Laplace or Gaussian mechanism; got {self.base!r}")
        check_range("rate", self.rate, low=0.0, high=1.0, high_open=False)

    @property
    def name(self) -> str:
        """``PoissonSubsampled[Base]``, e.g. ``PoissonSubsampled[Laplace]``."""
        return f"PoissonSubsampled[{type(self.base).__name__}]"

    def check_database(self, database: jax.Array) -> None:
        """Raise ``ValueError`` unless ``database`` is a non-empty array of shape (m,) or (m, d)."""
        as_database(database)

    def _sample(self, key: jax.Array, database: jax.Array, n: int) -> jax.Array:
        """``Σ_i Z_i x_i + Y``: shape ``(n,)`` for ``(m,)`` databases, ``(n, d)`` for ``(m, d)``."""
        x = as_database(database)
        key_keep, key_noise = jax.random.split(key)
        keep = _random.bernoulli(key_keep, jnp.asarray(self.rate), (n, x.shape[0]))
        kept_sum = keep.astype(x.dtype) @ x  # Eq. (22): the sum over the kept entries
        noise = self.base.noise(key_noise, kept_sum.shape)  # the default float, as in the base
        return kept_sum.astype(noise.dtype) + noise

    def output(self, database: jax.Array | None = None) -> OutputSpec:
        """The base mechanism's output: continuous, of the dimension of the rows."""
        return self.base.output(database)

    def reference_pair(self) -> tuple[jax.Array, jax.Array]:
        """Pair (21) of 000."""
        return self.base.reference_pair()

    def divergence(self, lam: float, x: Any, x_prime: Any) -> float | None:
        """Exact ``D_λ``: closed form (integer λ, pair (21)-like), else mixture quadrature.

        Returns ``None`` for vector-valued statistics off the pair (21) structure, and for
        ``λ = ∞`` off that structure.
        """
        lam = check_lam(lam)
        a, b = host_database(x), host_database(x_prime)
        if a.shape != b.shape:
            raise ValueError(f"x and x_prime must have the same shape; got {a.shape}, {b.shape}")
        gamma = scalar_param("rate", self.rate)
        nonzero_rows = np.flatnonzero(np.any(np.atleast_2d(a.T).T != 0, axis=1))
        single = not np.any(b) and nonzero_rows.size == 1
        if single:
            row = np.atleast_1d(a[nonzero_rows[0]])
            if math.isinf(lam):
                eps0 = self.base.divergence_of_shift(lam, row)
                return math.log1p(gamma * math.expm1(eps0)) if math.isfinite(eps0) else math.inf
            if float(lam).is_integer():
                eps0_at = lambda j: self.base.divergence_of_shift(j, row)  # noqa: E731
                return _closed_form(int(lam), gamma, eps0_at)
        if a.ndim == 1 and math.isfinite(lam):
            return self._quadrature(lam, a, b, gamma)
        return None

    def _quadrature(self, lam: float, a: np.ndarray, b: np.ndarray, gamma: float) -> float:
        scale = scalar_param("scale", self.base.scale)
        atoms_p, logw_p = _exact.subset_sum_law(a, gamma)
        atoms_q, logw_q = _exact.subset_sum_law(b, gamma)
        atoms_p, atoms_q = atoms_p[:, 0], atoms_q[:, 0]
        if isinstance(self.base, Gaussian):
            kernel = lambda u: _exact.log_gaussian_pdf(u, scale)  # noqa: E731
            margin = 40.0 * scale  # Gaussian tails below e^{-800}
        else:
            kernel = lambda u: _exact.log_laplace_pdf(u, scale)  # noqa: E731
            margin = 80.0 * scale  # exponential tails below e^{-80}
        all_atoms = np.concatenate([atoms_p, atoms_q])
        lo_atom, hi_atom = float(all_atoms.min()), float(all_atoms.max())
        span = hi_atom - lo_atom
        return _exact.renyi_from_logdensity(
            lam,
            lambda t: _exact.log_mixture_density(t, atoms_p, logw_p, kernel),
            lambda t: _exact.log_mixture_density(t, atoms_q, logw_q, kernel),
            lo=lo_atom - lam * span - margin,
            hi=hi_atom + lam * span + margin,
            breakpoints=all_atoms if isinstance(self.base, Laplace) else (),
            max_width=scale / 2.0,
        )

    @property
    def epsilon(self) -> float | None:
        """``log(1 + γ(e^{ε0} − 1))`` when the base is ε0-DP (Laplace); else ``None``.

        Amplification by Poisson subsampling for the replace-one relation when the base mechanism
        is ε0-close to its own output on the record removed (here: entries in [0, 1]); it is
        attained on pair (21) at outputs ``t ≥ 1``.
        """
        eps0 = self.base.epsilon
        gamma = param_value(self.rate)
        if eps0 is None or gamma is None:
            return None
        value = np.log1p(gamma * np.expm1(eps0))
        return float(value) if np.ndim(value) == 0 else value


def _closed_form(lam: int, gamma: float, eps0) -> float:
    """The binomial expansion above, in log space (all terms are positive)."""
    from scipy.special import gammaln, logsumexp  # here, not at import: 0.2 s

    if gamma == 1.0:
        return eps0(lam)
    log_1mg, log_g = math.log1p(-gamma), math.log(gamma)
    terms = [(lam - 1) * log_1mg + math.log(lam * gamma - gamma + 1)]
    for j in range(2, lam + 1):
        log_comb = gammaln(lam + 1) - gammaln(j + 1) - gammaln(lam - j + 1)
        terms.append(log_comb + (lam - j) * log_1mg + j * log_g + (j - 1) * eps0(j))
    value = float(logsumexp(terms)) / (lam - 1)
    return max(value, 0.0)
