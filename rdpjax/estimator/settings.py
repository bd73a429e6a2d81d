"""The estimator's settings: the bandwidth h, the floor τ and the softmax sharpness β.

Kutta, Askin, Dunsche, arXiv:2212.04739v3, §III-B leaves (h, τ, β) to the user; rdpjax fixes
them by the rules of :class:`Defaults` (chosen by its calibration study) from a pooled robust
scale of the data and the sample size. This module is the one place those rules are written:
:func:`continuous_settings` and :func:`discrete_settings` (jittable), and
:func:`padded_settings`, the compiled resolver that :func:`rdpjax.lower_bound` uses for samples
padded to a bucketed size (so that a new n does not compile anything new).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._typing import Array, ArrayLike, typed_jit
from rdpjax.estimator.grid import bucket_size, power_of_two_shift

__all__ = [
    "Defaults",
    "DEFAULTS",
    "continuous_settings",
    "discrete_settings",
    "padded_settings",
    "scale_stride",
    "scheduled_settings",
]

SCALE_POINTS = 2**10
"""At most this many points per sample (a strided subsample) enter the pooled scale.

Chosen by measurement (``python benchmarks/calibration/calibrate_scale.py``, R = 200 a cell, the
same draws under each number of points), twice, 2^16 against 2^12 and 2^12 against 2^10: fewer
points make the scale's sorts cheaper and its replication spread wider, without a visible effect
on the bounds. The coverage and tightness: ``docs/calibration.md``, section "Why the Defaults are
what they are" (the pooled scale's subsample); the sorts' times: ``docs/performance.md``, section
"The pooled scale's sorts (SCALE_POINTS)".
"""


@dataclasses.dataclass(frozen=True)
class Defaults:
    """Tuning rules for (h, τ, β), in standardized units (data divided by a pooled scale).

    Chosen by the calibration study ``benchmarks/calibration/calibrate.py`` (coverage of the 95%
    bound and tightness, Gaussian and Laplace b = 5, n = 1e4 … 1e7, R = 200) and the studies
    after it; the evidence for each rule and constant, with its numbers, is in
    ``docs/calibration.md`` ("Why the Defaults are what they are").

    Continuous (d dimensions, pooled robust scale ``s`` per axis, ``n = min(n_p, n_q)``):
      * bandwidth ``h = bandwidth_factor · s · n^(−a_d)``, ``a_1 = bandwidth_exponent_1d``,
        ``a_d = a_1 · 3/(2d+1)`` (below 1/(2d)); undersmoothing, since the plug-in's KDE noise
        biases it upward (removed to second order by :mod:`rdpjax.estimator.second_order`).
      * floor ``τ = floor_factor · n^(−floor_exponent) / ∏s`` (a density), times the peak
        ratio (2π)^(−(d−1)/2) when d > 1, decoupled from h.
      * ``β = 1/τ`` (paper: "fixing β = τ⁻¹ is a reasonable choice").

    Discrete: ``τ = discrete_floor_factor · n^(−discrete_floor_exponent)`` (√n τ → ∞, as
    Assumption 2 asks), never below ``discrete_floor_counts / n`` (a cell expected to hold
    fewer outputs cannot be told from an empty one), and ``β = 1/τ``.

    In the units of the pilot quantile map (:mod:`rdpjax.estimator.transform`;
    :meth:`for_map`): 1-D, ``h = 10^(1/4) · s · n^(−1/3) · c(n)`` with the taper
    ``c(n) = clip((n/10³)^(−0.35), 0.25, 1)`` (:meth:`taper`); 2 and 3 axes, the rule in data
    units (``a_d``) times ``c(n) = clip((n/10³)^(−0.2), 0.5, 1)``. The pooled scale is taken on
    strided subsamples of at most ``scale_points`` points a sample (:data:`SCALE_POINTS`).
    """

    bandwidth_factor: float = 1.0
    bandwidth_exponent_1d: float = 0.25
    floor_factor: float = 0.03
    floor_exponent: float = 1.0 / 3.0
    discrete_floor_factor: float = 0.03
    discrete_floor_exponent: float = 0.4
    discrete_floor_counts: float = 4.0
    map_bandwidth_factor: float = 10.0**0.25
    map_bandwidth_exponent_1d: float = 1.0 / 3.0
    bandwidth_taper: float = 0.0
    bandwidth_taper_floor: float = 1.0
    bandwidth_taper_from: float = 1000.0
    map_bandwidth_taper: float = 0.35
    map_bandwidth_taper_floor: float = 0.25
    map_multid_taper: float = 0.2
    map_multid_taper_floor: float = 0.5
    scale_points: int = SCALE_POINTS

    def for_map(self, dim: int = 1) -> Defaults:
        """These rules with the bandwidth of ``dim``-D samples in the quantile map's units."""
        if dim > 1:  # the rule in data units, tapered
            return dataclasses.replace(
                self,
                bandwidth_taper=self.map_multid_taper,
                bandwidth_taper_floor=self.map_multid_taper_floor,
            )
        return dataclasses.replace(
            self,
            bandwidth_factor=self.map_bandwidth_factor,
            bandwidth_exponent_1d=self.map_bandwidth_exponent_1d,
            bandwidth_taper=self.map_bandwidth_taper,
            bandwidth_taper_floor=self.map_bandwidth_taper_floor,
        )

    def taper(self, n: float | Array) -> float | Array:
        """The factor ``clip((n / n₀)^(−taper), taper_floor, 1)`` on the bandwidth (1 by default).

        Only the quantile map's rules (:meth:`for_map`) taper: in 1-D ``(n/10³)^(−0.35)``, at
        least 0.25 (0.45 at 10⁴, 0.25 from 5.2·10⁴ on); with 2 or 3 axes ``(n/10³)^(−0.2)``, at
        least 0.5.
        """
        if not self.bandwidth_taper:
            return 1.0
        ratio = (n / self.bandwidth_taper_from) ** (-self.bandwidth_taper)
        return jnp.clip(ratio, self.bandwidth_taper_floor, 1.0)

    def bandwidth_exponent(self, dim: int) -> float:
        """Exponent a_d of ``h ∝ n^(−a_d)``: ``a_1 · 3/(2d+1)`` (stays below 1/(2d))."""
        return self.bandwidth_exponent_1d * 3.0 / (2 * dim + 1)


DEFAULTS = Defaults()


def _sort_finite(x: Array) -> Array:
    """``jnp.sort(x, axis=0)`` for float64 without NaN, by sorting the bit patterns as integers.

    Flipping the 63 low bits of negative floats makes their int64 patterns increase with the
    value (an involution, so the same flip maps back); +inf sorts last. Exact, and on CPU about
    10× faster than XLA's float sort, whose comparator handles NaN (measured: 2.6 vs 32 ms for
    50,000 values).
    """
    bits = jax.lax.bitcast_convert_type(x, jnp.int64)
    low = jnp.int64(0x7FFFFFFFFFFFFFFF)

    def flip(b: Array) -> Array:
        return b ^ ((b >> 63) & low)

    return jax.lax.bitcast_convert_type(flip(jnp.sort(flip(bits), axis=0)), jnp.float64)


def _percentiles(x: Array, quantiles: Sequence[float], m: int | Array | None = None) -> list[Array]:
    """Quantiles along axis 0 of the first ``m`` rows of ``x``, by linear interpolation.

    All rows are used when ``m`` is ``None``; ``m`` may be traced, the later rows being padding.
    The interpolation is ``jnp.percentile``'s default method, with the same arithmetic, for
    finite float64 data.
    """
    if m is None:
        v, m = _sort_finite(x), x.shape[0]
    else:  # padding sorts last as +inf; the positions below use only the first m
        v = _sort_finite(jnp.where((jnp.arange(x.shape[0]) < m)[:, None], x, jnp.inf))
    out: list[Array] = []
    for q in quantiles:
        if isinstance(m, int):
            pos = q * (m - 1)
            low, high = math.floor(pos), math.ceil(pos)
            frac = pos - low
        else:
            pos = q * (m - 1.0)
            low, high = jnp.floor(pos).astype(jnp.int32), jnp.ceil(pos).astype(jnp.int32)
            frac = pos - low.astype(pos.dtype)
        out.append(v[low] * (1.0 - frac) + v[high] * frac)
    return out


def _square_safe_shift(sub: Array, m: int | Array | None) -> Array:
    """Per axis, ``−e`` where the first ``m`` rows' largest magnitude is ``2^e`` with |e| > 400.

    0 elsewhere (and for all-zero axes).
    """
    rows = sub if m is None else jnp.where((jnp.arange(sub.shape[0]) < m)[:, None], sub, 0.0)
    return power_of_two_shift(jnp.max(jnp.abs(rows), axis=0), 400)


def _robust_scale(sub: Array, m: int | Array | None = None) -> Array:
    """``min(sd, IQR/1.349)`` per axis (Silverman 1986, eq. (3.30)) of the first ``m`` rows.

    Those are the first ``m`` rows of ``sub`` (all when ``None``; the later rows are padding).
    """
    sub = sub.astype(jnp.float64)
    # Squares of deviations beyond 2^±400 leave float64: such an axis is scaled by a power of
    # two first (exact); ordinary data by 1, which leaves every bit as it was.
    shift = _square_safe_shift(sub, m)
    if m is None:
        sd = jnp.ldexp(jnp.std(jnp.ldexp(sub, shift[None]), axis=0, ddof=1), -shift)
    else:
        valid = (jnp.arange(sub.shape[0]) < m)[:, None]
        scaled = jnp.ldexp(sub, shift[None])
        mean = jnp.sum(jnp.where(valid, scaled, 0.0), axis=0) / m
        dev = scaled - mean[None]
        sd = jnp.sqrt(jnp.sum(jnp.where(valid, dev**2, 0.0), axis=0) / (m - 1))
        sd = jnp.ldexp(sd, -shift)
    q75, q25 = _percentiles(sub, (0.75, 0.25), m)
    iqr = (q75 - q25) / 1.349
    return jnp.where(iqr > 0, jnp.minimum(sd, iqr), sd)


def scale_stride(n: int, points: int) -> int:
    """The stride of the settings' subsample of ``n`` rows: at most ``points`` rows are read."""
    return max(1, math.ceil(n / points))


def _pooled_scale(p: Array, q: Array, points: int) -> Array:
    """Pooled robust scale per axis: the mean over both samples of :func:`_robust_scale`.

    It is taken on strided subsamples of at most ``points`` (``Defaults.scale_points``;
    representative even for sorted data).
    """
    return 0.5 * (
        _robust_scale(p[:: scale_stride(p.shape[0], points)])
        + _robust_scale(q[:: scale_stride(q.shape[0], points)])
    )


def _from_scale(
    scale: Array,
    n: int | Array,
    d: int,
    bandwidth: ArrayLike | None,
    floor: ArrayLike | None,
    beta: ArrayLike | None,
    defaults: Defaults,
) -> tuple[Array, Array, Array]:
    """(h, τ, β) from the pooled scale and the rate's n; ``None`` entries follow ``defaults``."""
    h_std = defaults.bandwidth_factor * n ** (-defaults.bandwidth_exponent(d)) * defaults.taper(n)
    h = scale * h_std if bandwidth is None else jnp.broadcast_to(jnp.asarray(bandwidth), (d,))
    if floor is None:
        peak = (2 * jnp.pi) ** (-(d - 1) / 2)
        tau_std = defaults.floor_factor * n ** (-defaults.floor_exponent) * peak
        floor = tau_std / jnp.prod(scale)
    floor = jnp.asarray(floor, jnp.float64)
    beta = 1.0 / floor if beta is None else jnp.asarray(beta, jnp.float64)
    return h.astype(jnp.float64), floor, beta


def continuous_settings(
    p: Array,
    q: Array,
    bandwidth: ArrayLike | None,
    floor: ArrayLike | None,
    beta: ArrayLike | None,
    defaults: Defaults,
    n: int | None = None,
) -> tuple[Array, Array, Array]:
    """Resolve (h, τ, β) for continuous ``(n, d)`` samples. Jittable.

    The scale comes from ``p`` and ``q``; the rates use ``n`` (default ``min`` of their sizes;
    the streamed pipeline passes the full sample size and a pilot sample).
    """
    n = min(p.shape[0], q.shape[0]) if n is None else n
    scale = _pooled_scale(p, q, defaults.scale_points)
    return _from_scale(scale, n, p.shape[1], bandwidth, floor, beta, defaults)


def discrete_settings(
    n: int | Array, floor: ArrayLike | None, beta: ArrayLike | None, defaults: Defaults
) -> tuple[Array, Array]:
    """(τ, β) for relative frequencies from ``n = min(n_p, n_q)`` (may be traced)."""
    if floor is None:
        rate = defaults.discrete_floor_factor * n ** (-defaults.discrete_floor_exponent)
        floor = jnp.maximum(rate, defaults.discrete_floor_counts / n)
    floor = jnp.asarray(floor, jnp.float64)
    beta = 1.0 / floor if beta is None else jnp.asarray(beta, jnp.float64)
    return floor, beta


def scale_subsample(x: np.ndarray, points: int) -> tuple[np.ndarray, int]:
    """Host side of :func:`padded_settings`: a padded subsample of ``x`` and its length.

    The subsample is the strided one that :func:`_pooled_scale` takes of ``x`` (``(n, d)``) at
    most ``points`` long (``Defaults.scale_points``), padded with zero rows to ``points`` rows
    (or :func:`rdpjax.estimator.grid.bucket_size` of its length, if more), so that every n
    shares one compiled program.
    """
    stride = scale_stride(x.shape[0], points)
    sub = x[::stride]
    rows = max(points, bucket_size(len(sub)))
    out = np.zeros((rows, x.shape[1]), np.float64)
    out[: len(sub)] = sub
    return out, len(sub)


@typed_jit(static_argnames=("defaults",))
def padded_settings(
    sub_p: ArrayLike,
    m_p: int | Array,
    sub_q: ArrayLike,
    m_q: int | Array,
    n_p: int | Array,
    n_q: int | Array,
    bandwidth: ArrayLike | None,
    floor: ArrayLike | None,
    beta: ArrayLike | None,
    *,
    defaults: Defaults,
) -> tuple[Array, Array, Array]:
    """:func:`continuous_settings` of samples of sizes ``n_p, n_q`` from their subsamples.

    The subsamples are :func:`scale_subsample`'s (the first ``m`` rows of ``sub``), with every
    size traced: one compiled program serves every n whose subsamples have the same padded
    shape. The result equals :func:`continuous_settings`' up to the order of floating-point
    additions.
    """
    sub_p, sub_q = jnp.asarray(sub_p), jnp.asarray(sub_q)  # traced already: adds nothing
    scale = 0.5 * (_robust_scale(sub_p, m_p) + _robust_scale(sub_q, m_q))
    n = jnp.minimum(n_p, n_q).astype(jnp.float64)
    return _from_scale(scale, n, sub_p.shape[1], bandwidth, floor, beta, defaults)


@typed_jit(static_argnames=("defaults",))
def scheduled_settings(
    p: Array,
    q: Array,
    sizes: Array,
    bandwidth: ArrayLike | None,
    floor: ArrayLike | None,
    beta: ArrayLike | None,
    *,
    defaults: Defaults,
) -> tuple[Array, Array, Array]:
    """:func:`continuous_settings` at each planned sample size.

    The scale comes from the (pilot) samples ``p``, ``q`` (``(m, d)``), the rates from each
    entry of ``sizes`` (``(K,)``).

    Returns ``h`` ``(K, d)``, ``τ`` ``(K,)`` and ``β`` ``(K,)``: the defaults of a fixed-n bound
    at every look of a sequential audit (:mod:`rdpjax.auditing.sequential`), fixed before its draws.
    """
    scale = _pooled_scale(p, q, defaults.scale_points)

    def at(n: Array) -> tuple[Array, Array, Array]:
        return _from_scale(scale, n, p.shape[1], bandwidth, floor, beta, defaults)

    return jax.vmap(at)(jnp.asarray(sizes, jnp.float64))
