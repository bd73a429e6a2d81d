"""One catalog entry (:class:`Case`) and the exact divergences the entries quote.

A case is a mechanism as rdpjax audits it (a numpy black box ``sample(rng, database, n)`` or a
JAX sampler wrapped by ``rdpjax.mechanisms.from_sampler``, or a zoo mechanism), the adjacent pair,
the claim its library or author states (through ``rdpjax.claims``), the exact ε(λ) of that pair
where it is known, and the n per database the catalog audits it at.

The exact values here are computed independently of rdpjax's zoo (closed forms, sums over the
integers, scipy quadrature); ``tests/test_libraries.py`` checks them against the zoo's own.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import integrate, special

KINDS = ("bug", "correct")


@dataclasses.dataclass(frozen=True)
class Case:
    """One mechanism audited against one claim on one pair.

    Attributes:
      name: a short unique identifier (``catalog.py --cases`` takes it).
      library: the library the mechanism comes from (``"synthetic"`` for a bug shape written
        here, ``"rdpjax zoo"`` for the zoo's published incorrect variants).
      kind: ``"bug"`` (the claim is false: the catalog expects it refuted) or ``"correct"``.
      mechanism: what ``rdpjax.audit`` takes.
      x, x_prime: the adjacent databases.
      claim: the ``rdpjax.claims.Claim`` checked.
      n: outputs per database in the catalog.
      description: what the mechanism does, and where it departs from its claim.
      claim_source: where the claim comes from (the library's own accounting, a formula).
      exact: ``orders -> ε(λ)`` of the pair, the larger of both directions (``inf`` allowed), or
        ``None`` when unknown; a zoo mechanism's own exact values are used when it has them.
      exact_note: how ``exact`` was computed (closed form, quadrature, idealization).
      options: extra keyword arguments of ``rdpjax.audit`` (``discrete``, ``project``), fixed
        before any draw.
      cites: public reports of the bug or of the mechanism's analysis (URLs).
      twin: the name of the correct twin (bugs) or of the bug it is the twin of.
      version: the library's version (``None`` for the synthetic cases).
    """

    name: str
    library: str
    kind: str
    mechanism: Any
    x: Any
    x_prime: Any
    claim: Any
    n: int
    description: str
    claim_source: str
    exact: Callable[[np.ndarray], np.ndarray] | None = None
    exact_note: str = ""
    options: dict = dataclasses.field(default_factory=dict)
    cites: tuple[str, ...] = ()
    twin: str | None = None
    version: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}; got {self.kind!r}")
        if int(self.n) != self.n or self.n < 2:
            raise ValueError(f"{self.name}: n must be a whole number ≥ 2; got {self.n!r}")


def optional(module: str, distribution: str) -> tuple[Any, str | None, str | None]:
    """``(module, version, None)`` if ``module`` imports, else ``(None, None, reason)``."""
    try:
        mod = importlib.import_module(module)
    except Exception as err:  # noqa: BLE001 - ImportError, or a broken install (sklearn skew)
        return None, None, f"{distribution} is not usable ({type(err).__name__}: {err})"
    return mod, importlib.metadata.version(distribution), None


def seed_from(rng: np.random.Generator) -> int:
    """A 32-bit seed drawn from ``rng``: the handle a seedable library's own RNG is given."""
    return int(rng.integers(0, 2**32 - 1))


# -----------------------------------------------------------------------------------------------
# Exact ε(λ) of the pairs (both directions where they differ).


def gaussian_renyi(shift: float, sigma: float) -> Callable:
    """``λ Δ²/(2σ²)``: D_λ(N(Δ, σ²) ‖ N(0, σ²)) (Mironov 2017, arXiv:1702.07476, Prop. 7)."""
    return lambda orders: np.asarray(orders, np.float64) * shift**2 / (2 * sigma**2)


def laplace_renyi(shift: float, scale: float) -> Callable:
    """D_λ(Lap(Δ, b) ‖ Lap(0, b)), symmetric in the direction (Mironov 2017, Prop. 6)::

    1/(λ−1) · log( λ/(2λ−1) e^{(λ−1)Δ/b} + (λ−1)/(2λ−1) e^{−λΔ/b} )
    """

    def curve(orders):
        lam = np.asarray(orders, np.float64)
        t = abs(shift) / scale
        terms = np.stack([(lam - 1) * t, -lam * t])
        weights = np.stack([lam / (2 * lam - 1), (lam - 1) / (2 * lam - 1)])
        return special.logsumexp(terms, b=weights, axis=0) / (lam - 1)

    return curve


def binary_renyi(p: float, q: float) -> Callable:
    """D_λ of Bernoulli(p) against Bernoulli(q), the larger direction."""

    def one(a, b, lam):
        return special.logsumexp(
            [
                lam * math.log(a) + (1 - lam) * math.log(b),
                lam * math.log1p(-a) + (1 - lam) * math.log1p(-b),
            ]
        ) / (lam - 1)

    def curve(orders):
        return np.array([max(one(p, q, lam), one(q, p, lam)) for lam in np.atleast_1d(orders)])

    return curve


def _lattice_renyi(log_p: np.ndarray, log_q: np.ndarray, log_z: float) -> Callable:
    """``λ ↦ (log Σ_k e^{λ log_p + (1−λ) log_q} − log_z) / (λ − 1)`` for unnormalized log-pmfs on
    a lattice sharing the normalizer ``e^{log_z}``: D_λ(P‖Q) of the two laws."""

    def curve(orders):
        out = []
        for lam in np.atleast_1d(np.asarray(orders, np.float64)):
            out.append((special.logsumexp(lam * log_p + (1 - lam) * log_q) - log_z) / (lam - 1))
        return np.array(out)

    return curve


def discrete_gaussian_renyi(shift: int, sigma: float, width: int = 60) -> Callable:
    """D_λ between discrete Gaussians N_Z(Δ, σ²), N_Z(0, σ²) (Canonne, Kamath, Steinke,
    arXiv:2004.00010): ``1/(λ−1) log Σ_k p(k)^λ q(k)^{1−λ}`` summed over |k| ≤ width·σ; the two
    laws share their normalizer, and the sum is symmetric in the direction."""
    k = np.arange(-int(width * sigma) - abs(shift), int(width * sigma) + abs(shift) + 1)
    log_q = -(k**2) / (2 * sigma**2)
    log_p = -((k - shift) ** 2) / (2 * sigma**2)
    log_z = special.logsumexp(log_q)

    return _lattice_renyi(log_p, log_q, log_z)


def discrete_laplace_renyi(shift: int, epsilon: float, width: float = 80.0) -> Callable:
    """D_λ between two-sided geometric laws ``P(k) ∝ e^{−ε|k − c|}`` with centres Δ apart (the
    geometric mechanism of Ghosh, Roughgarden, Sundararajan at sensitivity 1), summed over the
    integers within ``width/ε`` of the centres; symmetric in the direction."""
    reach = int(width / epsilon) + abs(shift)
    k = np.arange(-reach, reach + 1)
    log_q = -epsilon * np.abs(k)
    log_p = -epsilon * np.abs(k - shift)
    log_z = special.logsumexp(log_q)

    return _lattice_renyi(log_p, log_q, log_z)


def _quad_renyi(log_p: Callable, log_q: Callable, lam: float, lo: float, hi: float, points):
    """``1/(λ−1) log ∫ p^λ q^{1−λ}`` by scipy quadrature, the integrand scaled by its peak."""
    grid = np.linspace(lo, hi, 4001)
    log_f = lam * log_p(grid) + (1 - lam) * log_q(grid)
    peak = float(np.max(log_f))
    value, _ = integrate.quad(
        lambda t: math.exp(lam * log_p(t) + (1 - lam) * log_q(t) - peak),
        lo,
        hi,
        points=points,
        limit=400,
        epsabs=0.0,
        epsrel=1e-10,
    )
    return (math.log(value) + peak) / (lam - 1)


def folded_laplace_renyi(center: float, center_prime: float, scale: float) -> Callable:
    """D_λ between Laplace laws folded at 0 (|Lap(c, b)| for c ≥ 0: density
    ``f(t − c) + f(t + c)`` on t ≥ 0, as diffprivlib's ``LaplaceFolded`` with lower = 0), the
    larger direction, by quadrature."""

    def log_density(c):
        def f(t):
            t = np.asarray(t, np.float64)
            return np.logaddexp(-np.abs(t - c) / scale, -np.abs(t + c) / scale) - math.log(
                2 * scale
            )

        return f

    p, q = log_density(center), log_density(center_prime)
    hi = max(center, center_prime) + 80 * scale
    points = sorted({center, center_prime})

    def curve(orders):
        return np.array(
            [
                max(
                    _quad_renyi(p, q, lam, 0.0, hi, points), _quad_renyi(q, p, lam, 0.0, hi, points)
                )
                for lam in np.atleast_1d(orders)
            ]
        )

    return curve


def sampled_gaussian_renyi(rate: float, sigma: float) -> Callable:
    """D_λ between (1−q)N(0, σ²) + qN(1, σ²) and N(0, σ²), the larger direction, by quadrature:
    one step of Poisson-sampled DP-SGD on a pair differing in one example whose clipped gradient
    has norm C (units of C), the others' gradients zero (Mironov, Talwar, Zhang,
    arXiv:1908.10530)."""

    log_norm = math.log(math.sqrt(2 * math.pi) * sigma)

    def log_q(t):
        return -(np.asarray(t, np.float64) ** 2) / (2 * sigma**2) - log_norm

    def log_p(t):
        t = np.asarray(t, np.float64)
        return (
            np.logaddexp(
                math.log1p(-rate) - t**2 / (2 * sigma**2),
                math.log(rate) - (t - 1) ** 2 / (2 * sigma**2),
            )
            - log_norm
        )

    def curve(orders):
        out = []
        for lam in np.atleast_1d(orders):
            hi = 1 + 40 * sigma * math.sqrt(lam)
            out.append(
                max(
                    _quad_renyi(log_p, log_q, lam, -hi, hi, [0.0, 1.0]),
                    _quad_renyi(log_q, log_p, lam, -hi, hi, [0.0, 1.0]),
                )
            )
        return np.array(out)

    return curve


def infinite(orders) -> np.ndarray:
    """ε(λ) = ∞ at every order (outputs on the two databases with disjoint supports)."""
    return np.full(np.atleast_1d(orders).shape, np.inf)


def scaled(curve: Callable, factor: float) -> Callable:
    """``factor · curve``."""
    return lambda orders: factor * np.asarray(curve(orders), np.float64)
