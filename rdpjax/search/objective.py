"""The search objective: the plug-in ``D_λ(p̂_x ‖ q̂_{x',τ})`` of one pair on fixed-size draws.

Eq. (14)–(16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3 on ``n`` draws per side with common
random numbers (the same PRNG key for x and x'), so the objective is a deterministic, piecewise
smooth function of the pair. Continuous outputs are linearly binned on a fixed grid (the binning
weights are linear in the sample locations, hence differentiable), smoothed by the FFT KDE of
eq. (10) at a fixed bandwidth and floored by eq. (13); discrete outputs are counted (eq. (9)).

The static layout — grid, bandwidth and floor, or the alphabet — is fixed once by a pilot
(:func:`build_objective`), with the bound's own rules (:mod:`rdpjax.estimator.settings`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._validation import check_int, check_orders
from rdpjax.estimator.binning import linear_binning
from rdpjax.estimator.divergence import plugin_divergence
from rdpjax.estimator.grid import KERNEL_RADIUS, Grid, grid_from_range, grid_layout
from rdpjax.estimator.kde import kernel_half_width, smooth
from rdpjax.estimator.settings import DEFAULTS, continuous_settings, discrete_settings
from rdpjax.mechanisms.base import Mechanism
from rdpjax.search.space import SearchSpace, search_space

__all__ = ["Objective", "build_objective", "search_objective"]

_GRID_CAP = {1: 4096, 2: 128, 3: 32}  # points per axis of the search grid (memory O(cap^d))
_CELLS_PER_BANDWIDTH = 8  # the objective ranks pairs; the certified bound uses the full grid


@dataclasses.dataclass(frozen=True)
class Objective:
    """The plug-in ``D_λ(p̂_x ‖ q̂_{x',τ})`` on fixed-size draws; static layout fixed by a pilot."""

    mechanism: Mechanism
    n: int
    discrete: bool
    encode: Callable | None
    size: int  # discrete: alphabet size
    grid: Grid | None
    bandwidth: jax.Array | None
    half_width: tuple[int, ...]
    floor: float
    beta: float

    def density(self, samples):
        """Grid density (eq. (10), linear binning then FFT) or relative frequencies (eq. (9))."""
        if self.discrete:
            codes = self.encode(samples)
            return jnp.zeros(self.size).at[codes].add(1.0, mode="drop") / self.n  # Eq. (9)
        counts, _ = linear_binning(samples.reshape(self.n, -1), self.grid)
        # Eq. (10) on the grid. Normalized by n, not by the binned mass, so that a sample that
        # leaves the grid only removes its own mass (the pilot makes that rare).
        dens = smooth(counts, self.grid, self.bandwidth, self.half_width)
        return jnp.maximum(dens / (self.n * self.grid.cell_volume), 0.0)

    def __call__(self, x, x_prime, key, lam):
        """The plug-in ``D_λ`` (eq. (14)) of the pair from ``n`` draws per side, both on ``key``."""
        p = self.mechanism.sample(key, x, self.n)
        q = self.mechanism.sample(key, x_prime, self.n)  # common random numbers
        fp, fq = self.density(p), self.density(q)
        cell = 1.0 if self.discrete else self.grid.cell_volume
        return plugin_divergence(fp, fq, lam, self.floor, self.beta, cell)  # Eq. (14)


# One compiled program for the pilot's settings: run eagerly, each of its sorts, percentiles and
# reductions compiled a program of its own (`rdpjax search laplace --steps 50 --restarts 4`
# cached 68 programs that way, 43 with this; benchmarks/performance/cli_times.py).
_pilot_settings = jax.jit(continuous_settings, static_argnames=("defaults", "n"))


def build_objective(mechanism, space: SearchSpace, keys, n: int) -> Objective:
    """Fix the grid (or alphabet), bandwidth and floor from pilot draws (host-side).

    The pilot draws every restart's search key at the two corner databases (all entries at
    ``low``, all at ``high``) and at the middle one, so the grid holds the search draws of
    monotone mechanisms; a margin of 10% of the range plus the kernel holds the rest (a sample
    off the grid only loses its own mass in the objective). The bandwidth and floor are the
    bound's (:func:`rdpjax.estimator.settings.continuous_settings`, :func:`~rdpjax.estimator.
    settings.discrete_settings`) at the rate of ``n``, with the pooled robust scale of the two
    corners' draws (every restart's, on the settings' strided subsample of at most
    :data:`rdpjax.estimator.settings.SCALE_POINTS` per corner).
    """
    ends = jnp.asarray([space.low, space.high, 0.5 * (space.low + space.high)], jnp.float64)
    databases = space.snap(
        jnp.broadcast_to(ends.reshape(3, *[1] * len(space.shape)), (3, *space.shape))
    )
    spec = mechanism.output(databases[0])

    def draw(key, x):
        return mechanism.sample(key, x, n)

    samples = jax.jit(jax.vmap(jax.vmap(draw, (None, 0)), (0, None)))(keys, databases)
    samples = np.asarray(samples)  # (R, databases, n[, d])
    if spec.is_discrete:
        codes = np.asarray(jax.vmap(jax.vmap(spec.encode))(jnp.asarray(samples)))
        size = spec.alphabet_size or int(codes.max()) + 1
        floor, beta = (float(v) for v in discrete_settings(n, None, None, DEFAULTS))
        return Objective(mechanism, n, True, spec.encode, size, None, None, (), floor, beta)
    d = 1 if samples.ndim == 3 else samples.shape[-1]
    if d > 3:
        raise ValueError(
            f"{mechanism.name} has {d}-dimensional outputs; the KDE objective and "
            "rdpjax.lower_bound take d ≤ 3."
        )
    flat = samples.reshape(-1, d)
    low_corner, high_corner = (samples[:, i].reshape(-1, d) for i in (0, 1))
    bandwidth, floor, beta = _pilot_settings(
        jnp.asarray(low_corner), jnp.asarray(high_corner), None, None, None, DEFAULTS, n=n
    )
    bandwidth = np.asarray(bandwidth)
    if np.any(bandwidth <= 0):  # h = scale · n^(−a_d) is zero where the robust scale is
        raise ValueError(f"{mechanism.name}: the outputs have no spread; nothing to estimate.")
    lo, hi = flat.min(0), flat.max(0)
    margin = 0.1 * (hi - lo) + 2.0 * bandwidth
    lo, hi = lo - margin, hi + margin
    shape, pad = grid_layout(lo, hi, bandwidth, cells_per_bandwidth=_CELLS_PER_BANDWIDTH)
    if max(shape) > _GRID_CAP[d]:
        shape, pad = grid_layout(lo, hi, bandwidth, grid_size=_GRID_CAP[d])
    grid = grid_from_range(jnp.asarray(lo), jnp.asarray(hi), shape, pad)
    half_width = kernel_half_width(bandwidth, np.asarray(grid.spacing), KERNEL_RADIUS)
    half_width = tuple(min(w, p) for w, p in zip(half_width, pad, strict=True))
    return Objective(
        mechanism,
        n,
        False,
        None,
        0,
        grid,
        jnp.asarray(bandwidth),
        half_width,
        float(floor),
        float(beta),
    )


def search_objective(
    key: jax.Array, mechanism: Mechanism, lam: float, *, n: int = 4096, space=None
) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """The search objective of :func:`~rdpjax.search.find_pair` as a function ``(x, x') ↦ D̂_λ``.

    The plug-in ``D_λ(p̂_x ‖ q̂_{x',τ})`` on ``n`` draws per side from ``key`` (the same key for x
    and x': common random numbers), with the grid, bandwidth and floor fixed by a pilot at the
    corners of ``space``. Deterministic and, for continuous outputs of a reparameterized
    sampler, differentiable in x and x'. Build and call it inside ``rdpjax.float64()``.

    Args:
      key: the PRNG key of the draws.
      mechanism: the mechanism.
      lam: the order λ > 1.
      n: draws per side (static).
      space: a :class:`~rdpjax.search.SearchSpace`; default :func:`~rdpjax.search.search_space`.
    """
    space = search_space(mechanism) if space is None else space
    check_int(n, "n", 2)
    objective = build_objective(mechanism, space, key[None], n)
    lam = float(check_orders(lam)[0])
    return lambda x, x_prime: objective(x, x_prime, key, lam)
