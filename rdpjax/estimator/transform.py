"""A pilot quantile map: continuous outputs made near-uniform before the KDE.

One bandwidth and one floor cannot fit every law: the pooled scale of a two-mode law is set by
the distance between the modes (h far too wide for each), a spike-and-slab law needs a fine grid
for its spike over the whole width of its slab, and a heavy tail stretches the grid (it spans the
data's range) until its cells outgrow the bandwidth, so that the bound *falls* as n grows.

The Rényi divergence is invariant under any injective map ``T`` of the outputs, and by the data
processing inequality any fixed measurable map can only lower it: ``D_λ(P∘T⁻¹ ‖ Q∘T⁻¹) ≤
D_λ(P ‖ Q)`` (Definition 2 of Kutta, Askin, Dunsche, arXiv:2212.04739v3, and the DPI for Rényi
divergences, van Erven & Harremoës, arXiv:1206.2459v2, Theorem 9). So a lower bound computed on
``T(X)`` is a lower bound for the original pair, provided ``T`` is fixed *before* the samples it
is applied to. Here ``T`` is fitted on a **pilot split**: every ``stride``-th row of each sample
(fixed indices, hence independent of the other rows for i.i.d. outputs) is set aside, and the
bound uses the remaining rows only. Given the pilot, the bound is the ordinary bound (16) on
i.i.d. samples of ``T(X)``, and its validity does not depend on how good ``T`` is; only its
tightness does.

``T`` (per axis) is the pooled pilot's empirical quantile function inverted: knots ``x_j`` at the
levels ``u_j = (j + ½)/K``, linear in between (strictly increasing after ties are merged), and
exponential tails that keep value and slope at the end knots and map ``(−∞, x_0)`` onto
``(0, u_0)`` and ``(x_{K−1}, ∞)`` onto ``(u_{K−1}, 1)``. The transformed pooled law is close to
uniform on (0, 1), so the grid is small and one bandwidth fits it wherever the mass is.

For outputs of two or three axes the per-axis maps are followed by an **unmixing** fitted on the
same pilot: with ``z = Φ⁻¹(T_axis(x))`` the pilot's normal scores and ``R = L Lᵀ`` their
correlation matrix, ``T(x) = Φ(L⁻¹ z)``. Per-axis maps alone turn correlated axes into a copula
whose density piles up in two corners, and the bound on it was looser than the KDE of the
outputs (a 2-D Gaussian with correlation 0.8); after the unmixing the axes are near-independent
and near-uniform. ``L`` is fitted on the pilot, so ``T`` stays a bijection fixed before the rows it
maps (``docs/calibration.md`` has the measurements).

``transform="auto"`` (:func:`lower_bound`'s default) applies the map wherever the KDE of the
outputs themselves is known to fit worse, decided on the pilot rows alone (:func:`auto_transform`)
by their tail ratio ``(Q(0.999) − Q(0.001)) / (Q(0.75) − Q(0.25))``, per axis (outputs of up to
:data:`AUTO_MAX_DIM` = 3 axes are mapped, every axis, when one axis asks for it):

* outside :data:`AUTO_TAIL_RANGE` = [1.3, 6], always. A ratio above 6 means tails at least
  exponential, or a skew, or a spike on a wide slab (Laplace 9.0, Student-t₃ 13, log-normal 15,
  Cauchy and spike and slab about 300), where one bandwidth in data units smooths away the
  log-ratio's kink (Laplace) or fits neither part; one below 1.3 means two separated modes
  holding the quartiles (two equal modes 1.1), where the pooled scale is the distance between
  them.
* in :data:`AUTO_GAUSSIAN_RANGE` = (3, 6], Gaussian-like tails (a Gaussian has 4.6), up to
  :data:`AUTO_GAUSSIAN_MAX_N` = 2^21 samples a side. There the map was tighter than the KDE of the
  outputs on all three of the zoo's Gaussian-tailed mechanisms (Gaussian, subsampled Gaussian, noisy
  GD) at every n from 10³ to 10⁷ with coverage ≥ 0.97 (R = 200,
  ``benchmarks/calibration/calibrate_zoo_map.py``), and it brought the off-zoo Gaussian with D_2 = 1
  from 1.6 to 1.0 times the oracle's deficit at 10⁵. At 10⁷ it gains 0.4–1.2% of ε(λ) and costs four
  to five times the bound's time (a pass of the map over every row; measured with the map on the
  host, and again on the device: ``docs/performance.md``), so above 2^21 Gaussian-tailed samples
  keep the KDE of the outputs, which the README's calibration measures.
* Ratios in [1.3, 3] — laws with a bounded support (uniform 2.0, a clipped Gaussian with atoms
  1.5, the zoo's truncated mechanisms 1.9–2.2) — are never mapped: their KDE fits them, and
  their calibration stands.
* Outputs of 2 or 3 axes are mapped, every axis, as soon as one axis would be in 1-D (outputs
  whose every axis has a bounded support keep their KDE); more than 3 axes are not measured and
  never mapped.

How noisy the pilot's ratio is at small n: ``docs/calibration.md`` ("Why the Defaults are what they
are"). The decision reads the pilot rows only; when it keeps the outputs, those rows are bounded
too, as the pooled scale and the data range that set the bandwidth and the grid are read from the
same data. When it maps, :func:`rdpjax.lower_bound` bounds the outputs' own KDE as well and keeps
the larger bound per order, α split 0.9 / 0.1 between the two (``rdpjax.estimator.api.KEPT_SHARE``):
the map gives a component of mass w only w of (0, 1), so a leak in a narrow low-mass component is
smoothed away after it however many knots it has (issue 47). The coverage and tightness of the rule:
``docs/calibration.md``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtr, ndtri

from rdpjax._precision import float64
from rdpjax._typing import Array, ArrayLike, typed_jit

__all__ = [
    "AUTO_GAUSSIAN_MAX_N",
    "AUTO_GAUSSIAN_RANGE",
    "AUTO_MAX_DIM",
    "AUTO_MIN_N",
    "AUTO_TAIL_RANGE",
    "TRANSFORMS",
    "QuantileMap",
    "auto_transform",
    "fit_pilot_map",
    "fit_quantile_map",
    "is_monotone",
    "map_axis",
    "pilot_split",
    "pilot_stride",
    "quantile_transform",
    "tail_ratio",
    "unmixed",
]

TRANSFORMS = (None, "quantile", "auto")
"""The values of ``lower_bound(..., transform=...)``."""

AUTO_TAIL_RANGE = (1.3, 6.0)
"""``transform="auto"`` maps outputs with an axis whose pilot :func:`tail_ratio` falls outside this
range."""

AUTO_GAUSSIAN_RANGE = (3.0, 6.0)
"""Pilot tail ratios of Gaussian-tailed outputs (a Gaussian has 4.6): ``transform="auto"`` maps
them too, up to :data:`AUTO_GAUSSIAN_MAX_N` samples a side."""

AUTO_GAUSSIAN_MAX_N = 2**21
"""The most samples a side at which ``transform="auto"`` maps Gaussian-tailed outputs: above it
the map gains at most 1.2% of ε(λ) on the zoo's Gaussian-tailed mechanisms (0.4–1.2% at 10⁷)
and costs four to five times the bound's time (``docs/calibration.md``)."""

AUTO_MAX_DIM = 3
"""``transform="auto"`` maps outputs of at most this many axes (1-, 2- and 3-D were measured)."""

AUTO_MIN_N = 1000
"""``transform="auto"`` maps nothing below this many samples a side (the rule's measured range)."""

PILOT_FRACTION = 16
"""The pilot is every 16th row of each sample (1/16 of the data) from 2,048 rows a side on.

Every 8th row before: at 10⁴ a side 1/16 gave bounds 3–5% of the oracle deficit closer to the
truth on every mapped off-zoo law, with the same coverage (``docs/calibration.md``). Below 2,048
rows the stride shrinks to keep :data:`PILOT_MIN` rows, down to every 8th row."""

PILOT_MIN = 128
"""Pilot rows a side wanted at least: with 63 (every 16th of 10³) the tail ratio left 40% of
Laplace pilots unmapped, against 13% with 125 (every 8th)."""

PILOT_MAX = 4096
"""The largest pilot per sample: past 65,536 samples a side the pilot is this many rows."""

MAX_KNOTS = 64
"""Knots of the quantile map: one per 16 pooled pilot rows, between 8 and 64."""


def pilot_stride(n: int) -> int:
    """The pilot's stride for ``n`` rows (:func:`pilot_split`)."""
    return max(min(PILOT_FRACTION, max(8, n // PILOT_MIN)), math.ceil(n / PILOT_MAX))


def pilot_split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split ``x`` into a pilot (every ``stride``-th row) and the rest, by fixed indices.

    The stride is ``max(clip(⌊n / PILOT_MIN⌋, 8, PILOT_FRACTION), ⌈n / PILOT_MAX⌉)``: a pilot of
    ``n/8`` rows at 10³, ``n/16`` from 2,048 rows on, at most :data:`PILOT_MAX`. For i.i.d. rows
    the two parts are independent.
    """
    n = x.shape[0]
    stride = pilot_stride(n)
    whole = n // stride * stride  # rows in whole blocks of `stride`; row `whole` is a pilot row
    blocks = x[:whole].reshape(n // stride, stride, *x.shape[1:])[:, 1:]
    rest = blocks.reshape(-1, *x.shape[1:])  # one copy, in the rows' order (no boolean mask)
    if whole + 1 < n:
        rest = np.concatenate([rest, x[whole + 1 :]])
    return x[::stride], rest


class QuantileMap:
    """The per-axis map ``T`` fitted on a pooled pilot (module docstring).

    Calling it maps rows on the host, chunk by chunk: the reference that
    :mod:`rdpjax.estimator.device_map` (what :func:`rdpjax.lower_bound` runs) equals value for
    value.

    Attributes:
      knots: list (one per axis) of strictly increasing knot values ``x_j``.
      levels: list of the matching levels ``u_j`` in (0, 1).
      unmix: ``L⁻¹`` of the unmixing (2 or more axes; module docstring), or ``None``.
    """

    def __init__(
        self, knots: list[np.ndarray], levels: list[np.ndarray], unmix: np.ndarray | None = None
    ) -> None:
        self.knots, self.levels, self.unmix = knots, levels, unmix

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``T(x)`` for ``(n, d)`` samples, float64 in (0, 1) (tails may round to 0 or 1)."""
        out = self.marginal(x)
        if self.unmix is None:
            return out
        return _by_chunks(unmixed, out, self.unmix)

    def padded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The map's tables padded to one shape: one compiled map for every pilot.

        Returns ``(knots, levels, sizes)``: each axis's knots padded to ``MAX_KNOTS + 1`` with
        +inf and its levels with the last level, ``(d, MAX_KNOTS + 1)``, and the real counts
        ``(d,)`` (int32, as :func:`map_axis` indexes).
        """
        knots = np.stack([np.r_[xk, np.full(MAX_KNOTS + 1 - len(xk), np.inf)] for xk in self.knots])
        levels = np.stack(
            [np.r_[uk, np.full(MAX_KNOTS + 1 - len(uk), uk[-1])] for uk in self.levels]
        )
        return knots, levels, np.array([len(xk) for xk in self.knots], np.int32)

    def marginal(self, x: np.ndarray) -> np.ndarray:
        """The per-axis maps alone, ``(n, d)`` → ``(n, d)``."""
        x = np.asarray(x, np.float64).reshape(len(x), -1)
        out = np.empty_like(x)
        knots, levels, sizes = self.padded()
        for axis in range(x.shape[1]):
            out[:, axis] = _by_chunks(
                map_axis, x[:, axis], knots[axis], levels[axis], int(sizes[axis])
            )
        return out


SCORE_CLIP = 1e-12
"""Mapped values are kept at least this far from 0 and 1 before their normal scores."""

_MAP_CHUNK = 2**17
"""Values mapped per call of the compiled map (the last chunk padded)."""


@typed_jit()
def map_axis(v: ArrayLike, xk: ArrayLike, uk: ArrayLike, k: ArrayLike) -> Array:
    """One axis of :meth:`QuantileMap.__call__`: knots ``xk[:k]`` (then +inf), levels ``uk``.

    The segment of each value is found by a branchless binary search over the padded knots
    (log2 64 = 6 gathers; numpy's ``interp`` branches and mispredicts on unsorted data: it was
    6× slower than this map on 10⁷ values, 0.42 s against 0.07 s), then ``np.interp``'s
    arithmetic inside, and the exponential tails outside ``[xk[0], xk[k−1]]``.
    """
    v, xk, uk, k = jnp.asarray(v), jnp.asarray(xk), jnp.asarray(uk), jnp.asarray(k)
    idx = jnp.zeros(v.shape, jnp.int32)  # the last knot ≤ v (0 below the first)
    step = MAX_KNOTS // 2
    while step:
        idx = idx + jnp.where(v >= xk[idx + step], step, 0)
        step //= 2
    j = jnp.minimum(idx, k - 2)
    x0, x1, u0, u1 = xk[j], xk[j + 1], uk[j], uk[j + 1]
    first, last, u_first, u_last = xk[0], xk[k - 1], uk[0], uk[k - 1]
    inner = jnp.where(v == last, u_last, (u1 - u0) / (x1 - x0) * (v - x0) + u0)  # as np.interp
    lo_slope = (uk[1] - u_first) / (xk[1] - first)
    hi_slope = (u_last - uk[k - 2]) / (last - xk[k - 2])
    top = 1.0 - u_last
    # u0·exp(s (x − x0)/u0): value u0 and slope s at x0, → 0 as x → −∞ (and the mirror above);
    # one exponential a value, of 0 inside.
    is_below, is_above = v < first, v > last
    power = jnp.where(is_below, lo_slope * (v - first) / u_first, 0.0)
    tail = jnp.exp(jnp.where(is_above, -hi_slope * (v - last) / top, power))
    return jnp.where(is_below, u_first * tail, jnp.where(is_above, 1.0 - top * tail, inner))


def fit_quantile_map(pilot: np.ndarray) -> QuantileMap:
    """The map of the pooled pilot rows ``(m, d)``: ``K = clip(m / 16, 8, 64)`` knots per axis.

    Raises:
      ValueError: if an axis of the pilot has fewer than two distinct values.
    """
    pilot = np.asarray(pilot, np.float64).reshape(len(pilot), -1)
    k = int(np.clip(len(pilot) // 16, 8, MAX_KNOTS))
    levels = (np.arange(k) + 0.5) / k
    knots: list[np.ndarray] = []
    kept_levels: list[np.ndarray] = []
    for axis in range(pilot.shape[1]):
        xk = np.quantile(pilot[:, axis], levels)
        # Ties (an atom in the pilot) would make the map a step: keep each value's first level.
        xk, first = np.unique(xk, return_index=True)
        if len(xk) < 2:
            raise ValueError(
                f"the pilot has a single value along axis {axis}: a quantile map needs spread "
                "(pass transform=None, or discrete=True if the output is discrete)."
            )
        knots.append(xk)
        kept_levels.append(levels[first])
    qmap = QuantileMap(knots, kept_levels)
    if pilot.shape[1] > 1:
        qmap.unmix = _unmixing(_normal_scores(qmap.marginal(pilot)))
    return qmap


def _normal_scores(u: np.ndarray) -> np.ndarray:
    """``Φ⁻¹(u)`` of ``(m, d)`` mapped rows (host arrays)."""
    return _by_chunks(_scores, u)


@typed_jit()
def _scores(u: ArrayLike) -> Array:
    """``Φ⁻¹(u)``, with ``u`` kept inside ``[SCORE_CLIP, 1 − SCORE_CLIP]`` (finite scores)."""
    return ndtri(jnp.clip(jnp.asarray(u), SCORE_CLIP, 1.0 - SCORE_CLIP))


@typed_jit()
def unmixed(u: ArrayLike, unmix: ArrayLike) -> Array:
    """``Φ(L⁻¹ Φ⁻¹(u))`` row by row (the unmixing of the module docstring)."""
    return ndtr(_scores(u) @ jnp.asarray(unmix).T)


def _by_chunks(fn: Callable[..., Array], rows: np.ndarray, *args: object) -> np.ndarray:
    """``fn`` of ``(n, …)`` rows, :data:`_MAP_CHUNK` rows a call (one compiled shape for any n).

    ``fn`` maps row by row; only the last chunk is padded (``np.pad`` copies), with rows of ½
    (finite normal scores), and the padding is dropped.
    """
    out = np.empty_like(rows)
    with float64():
        for start in range(0, len(rows), _MAP_CHUNK):
            part = rows[start : start + _MAP_CHUNK]
            size = len(part)
            if size < _MAP_CHUNK:
                pad = [(0, _MAP_CHUNK - size)] + [(0, 0)] * (part.ndim - 1)
                part = np.pad(part, pad, constant_values=0.5)
            out[start : start + size] = np.asarray(fn(part, *args))[:size]
    return out


def _unmixing(scores: np.ndarray) -> np.ndarray | None:
    """``L⁻¹`` for the Cholesky factor L of the scores' correlation matrix (pilot rows).

    ``None`` (no unmixing) when the matrix is not positive definite to working precision (an
    axis that is a function of another on the pilot).
    """
    corr = np.corrcoef(scores, rowvar=False)
    try:
        chol = np.linalg.cholesky(corr)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(chol)) or np.min(np.diag(chol)) < 1e-6:
        return None
    return np.linalg.inv(chol)


def tail_ratio(x: np.ndarray) -> float:
    """``(Q(0.999) − Q(0.001)) / (Q(0.75) − Q(0.25))`` of the values ``x``; ``inf`` if the IQR is 0.

    Scale- and location-free: 4.6 for a Gaussian, 9.0 for a Laplace law, 2.0 for a uniform law.
    """
    lo, q1, q3, hi = np.quantile(np.asarray(x, np.float64).ravel(), [0.001, 0.25, 0.75, 0.999])
    return float((hi - lo) / (q3 - q1)) if q3 > q1 else math.inf


def auto_transform(p: np.ndarray, q: np.ndarray) -> str | None:
    """What ``transform="auto"`` applies to continuous samples ``p``, ``q``: ``"quantile"`` or None.

    The quantile map for samples of at least :data:`AUTO_MIN_N` rows a side and at most
    :data:`AUTO_MAX_DIM` axes when, on the pooled pilot rows (:func:`pilot_split`, the rows the
    map would be fitted on), some axis has a :func:`tail_ratio` outside :data:`AUTO_TAIL_RANGE`,
    or in :data:`AUTO_GAUSSIAN_RANGE` with at most :data:`AUTO_GAUSSIAN_MAX_N` rows a side; the
    map then covers every axis. ``None`` otherwise, and when an axis of the pilot has an
    interquartile range of 0 (half the mass or more on one value: a map could not spread it).
    The decision reads the pilot rows only (module docstring).
    """
    p2, q2 = (np.asarray(x).reshape(len(x), -1) for x in (p, q))
    if p2.shape[1] > AUTO_MAX_DIM or min(len(p2), len(q2)) < AUTO_MIN_N:
        return None
    # The pilot rows of pilot_split, without copying the rest.
    pilot = np.concatenate([x[:: pilot_stride(len(x))] for x in (p2, q2)])
    ratios = [tail_ratio(pilot[:, axis]) for axis in range(pilot.shape[1])]
    if not all(math.isfinite(r) for r in ratios):
        return None
    small = max(len(p2), len(q2)) <= AUTO_GAUSSIAN_MAX_N
    return "quantile" if any(_maps_axis(r, small) for r in ratios) else None


def _maps_axis(ratio: float, small: bool) -> bool:
    """Whether an axis's pilot tail ratio asks for the map (``small``: ≤ 2^21 rows a side)."""
    low, high = AUTO_TAIL_RANGE
    gauss_low, gauss_high = AUTO_GAUSSIAN_RANGE
    return ratio < low or ratio > high or (small and gauss_low < ratio <= gauss_high)


def is_monotone(x: np.ndarray) -> bool:
    """Whether the first axis of ``(n, d)`` rows never decreases or never increases.

    Sorted or reversed rows, or ``np.repeat`` of sorted values: an order that depends on the
    values, which a split by position must not read.
    """
    first = np.asarray(x).reshape(len(x), -1)[:, 0]
    look = np.diff(first[:: max(1, len(first) // 64)])  # a strided look first: O(1)
    if np.any(look > 0) and np.any(look < 0):
        return False
    step = np.diff(first)
    return bool(np.any(step != 0) and (np.all(step >= 0) or np.all(step <= 0)))


def fit_pilot_map(p: np.ndarray, q: np.ndarray, *, stacklevel: int = 4) -> QuantileMap:
    """``T`` fitted on the pooled pilot rows of ``(n, d)`` samples ``p`` and ``q``.

    The pilots are :func:`pilot_split`'s (every :func:`pilot_stride`-th row); a warning says so
    when a sample is sorted (its pilot is then a fixed set of ranks, not a random subsample).
    """
    qmap = fit_quantile_map(np.concatenate([x[:: pilot_stride(len(x))] for x in (p, q)]))
    for x, name in ((p, "p_samples"), (q, "q_samples")):
        if is_monotone(x):
            warnings.warn(
                f"{name} is sorted: the quantile map's pilot (every {pilot_stride(len(x))}th row) "
                "is then a fixed set of ranks, not a random subsample. Pass key= to put the rows "
                "in a random order first (rdpjax.audit does this itself).",
                stacklevel=stacklevel,
            )
    return qmap


def quantile_transform(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, QuantileMap]:
    """Split off both pilots, fit ``T`` on them pooled, and map the remaining rows (host).

    :func:`rdpjax.lower_bound` maps the rows on the device instead
    (:mod:`rdpjax.estimator.device_map`), with the same values; this is the reference.

    Args:
      p: ``(n, d)`` samples of P.
      q: ``(m, d)`` samples of Q, the same d (m may differ from n).

    Returns:
      ``(T(p_rest), T(q_rest), T)``.
    """
    qmap = fit_pilot_map(p, q, stacklevel=3)
    return qmap(pilot_split(p)[1]), qmap(pilot_split(q)[1]), qmap
