"""The bound's pytrees: what is fixed before the data, the binned data and the result.

They are :class:`BoundPlan`, :class:`Binned` and :class:`Bound`; eq. (16) of Kutta, Askin, Dunsche,
arXiv:2212.04739v3 is in :meth:`BoundPlan.bound`. :meth:`BoundPlan.bin` takes samples to counts
(O(n)) and :meth:`BoundPlan.bound` counts to the bound (independent of n), so that the streamed
pipeline can feed counts it accumulated itself and one compiled bound serves every n.
:mod:`rdpjax.estimator.api` makes plans from data.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtri
from jax.sharding import Mesh

from rdpjax._pytree import pytree_dataclass
from rdpjax._table import Column, text_table
from rdpjax._typing import Array, ArrayLike
from rdpjax.estimator.binning import count_codes, linear_binning
from rdpjax.estimator.delta import delta_method
from rdpjax.estimator.grid import Grid, grid_from_range, in_bounded_units
from rdpjax.estimator.second_order import Smoothing
from rdpjax.estimator.settings import Defaults, continuous_settings, discrete_settings

__all__ = ["DIRECTION_NAMES", "Bound", "Binned", "BoundPlan"]


DIRECTION_NAMES = ("D(P||Q)", "D(Q||P)")
"""Labels of :attr:`Bound.direction`'s 0 and 1: P is the output law on x, Q on x'."""
IN_MEMORY_CHUNK = 2**18
"""Samples per scan step when :meth:`BoundPlan.bin_padded` bins samples held in memory: 1e7
float32 samples onto 10,240 points took 0.024 s in chunks of 2^18 against 0.030 s of 2^16 and
0.053 s of 2^14 (2-core CPU, one device, best of 5; 25 fraction bits: ``binning.packing``)."""


@pytree_dataclass(
    static=(
        "discrete",
        "n_bounds",
        "both_directions",
        "variance",
        "second_order",
        "grid_shape",
        "transform",
    )
)
class Bound:
    """Lower bounds on ε(λ), one per order. A pytree: arrays are leaves, flags are static.

    Attributes:
      lam: ``(L,)`` orders λ.
      estimate: ``(L,)`` plug-in estimate ``D_λ(p̂, q̂_τ)`` of the reported direction.
      lower: ``(L,)`` lower bounds ``estimate − bias + Φ⁻¹(level) · std_error``; with several
        bounds they hold simultaneously.
      std_error: ``(L,)`` estimated standard error of ``estimate`` (first- and, with
        ``second_order``, second-order delta method).
      bias: ``(L,)`` estimated second-order bias of ``estimate`` that was subtracted (zeros
        without ``second_order``); see :mod:`rdpjax.estimator.second_order`.
      direction: ``(L,)`` 0 where the bound is on ``D_λ(P‖Q)``, 1 on ``D_λ(Q‖P)`` (only with
        ``both_directions``: the larger of the two is reported).
      bandwidth: ``(d,)`` KDE bandwidths in data units (NaN-free; zeros for discrete data).
      floor: τ of the softmax floor (density units, or probability for discrete data).
      beta: β of the softmax floor.
      n_p, n_q: sample sizes.
      support: discrete data: the number of values seen in either sample (the support the
        frequencies live on; ``grid_shape`` may be larger, padded with empty cells); continuous
        data: the number of grid points.
      outside: ``(2,)`` numbers of P and Q samples that fell outside the grid or the planned
        support (always 0 from :func:`lower_bound`). A plan reused on new data reports them
        here and does not count them; :func:`rdpjax.stream.streamed_bound` clamps them onto
        the edge of its range (a fixed map, so the bound stays valid) and reports them here.
      alpha: the family-wise error level asked for.
      level: the level of each single bound, ``alpha / n_bounds``.
      discrete: whether relative frequencies (True) or KDEs (False) were used.
      n_bounds: K, the number of bounds made simultaneous (orders × directions).
      both_directions: whether both directions were bounded.
      variance: ``"autodiff"`` or ``"eq18"``.
      second_order: whether the second-order bias and variance correction was applied.
      transform: the map applied to continuous outputs before the KDE (``None``, or
        ``"quantile"``: :mod:`rdpjax.estimator.transform`).
      grid_shape: KDE grid shape, or ``(support size,)`` for discrete data (with the bucketed
        layout: the observed support padded with empty cells to one of four sizes per octave).
    """

    lam: Array
    estimate: Array
    lower: Array
    std_error: Array
    bias: Array
    direction: Array
    bandwidth: Array
    floor: Array
    beta: Array
    n_p: Array
    n_q: Array
    support: Array
    outside: Array
    alpha: Array
    level: Array
    discrete: bool
    n_bounds: int
    both_directions: bool
    variance: str
    second_order: bool
    grid_shape: tuple[int, ...]
    transform: str | None = None

    @property
    def simultaneous(self) -> bool:
        """True when several bounds were made to hold together (Bonferroni)."""
        return self.n_bounds > 1

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (JSON-ready), same field names."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            is_array = isinstance(v, jax.Array | np.ndarray)
            out[f.name] = np.asarray(cast(ArrayLike, v)).tolist() if is_array else v
        out["simultaneous"] = self.simultaneous
        # Which divergence each order's bound is on (P: the output law on x, Q: on x').
        out["direction_label"] = [DIRECTION_NAMES[int(d)] for d in np.atleast_1d(out["direction"])]
        return out

    def __str__(self) -> str:
        columns = [
            Column("lambda", 8, "g"),
            *(Column(h, 12, ".6f") for h in ("estimate", "bias", "lower", "std_error")),
        ]
        values = (self.lam, self.estimate, self.bias, self.lower, self.std_error)
        values = [np.atleast_1d(np.asarray(v, np.float64)) for v in values]
        arrows = [f"  {DIRECTION_NAMES[int(d)]}" for d in np.atleast_1d(self.direction)]
        lines = text_table(columns, list(zip(*values, strict=True)), tails=["  direction", *arrows])
        kind = "relative frequencies" if self.discrete else f"KDE, h={np.asarray(self.bandwidth)}"
        if self.transform is not None:
            kind = f"{kind} after the {self.transform} map"
        conf = f"{1 - float(self.alpha):.3g}"
        if self.simultaneous:
            orders = np.atleast_1d(np.asarray(self.lam)).size
            parts = [f"{orders} order{'s' if orders > 1 else ''}"]
            ways = 2 if self.both_directions else 1
            if ways == 2:
                parts.append("2 directions")
            families = int(self.n_bounds) // (orders * ways)
            if families > 1:  # the kept map's and the outputs' own (api.either_bound)
                parts.append(f"{families} estimators")
            note = (
                f"simultaneous {conf} over {' × '.join(parts)} = {self.n_bounds} bounds "
                "(Bonferroni)"
            )
        else:
            note = f"{conf} confidence"
        lines.append(
            f"{note}; {kind}, floor={float(self.floor):.4g}, beta={float(self.beta):.4g}, "
            f"n_p={int(self.n_p)}, n_q={int(self.n_q)}"
        )
        return "\n".join(lines)


def _pooled_span(
    p: Array, q: Array, n_p: int | Array, n_q: int | Array, padded: bool
) -> tuple[Array, Array]:
    """Per-axis ``(min, max)`` over the first ``n_p`` rows of ``p`` and ``n_q`` of ``q``."""
    if not padded:
        return jnp.minimum(p.min(0), q.min(0)), jnp.maximum(p.max(0), q.max(0))

    def real(x: Array, m: int | Array, fill: float) -> Array:
        return jnp.where((jnp.arange(x.shape[0]) < m)[:, None], x, fill)

    lo = jnp.minimum(real(p, n_p, jnp.inf).min(0), real(q, n_q, jnp.inf).min(0))
    return lo, jnp.maximum(real(p, n_p, -jnp.inf).max(0), real(q, n_q, -jnp.inf).max(0))


@pytree_dataclass()
class Binned:
    """What a bound needs from the data: both samples binned, their sizes, the settings.

    :meth:`BoundPlan.bin` makes it from samples in memory; :mod:`rdpjax.stream` makes it by
    drawing and binning chunk by chunk, so that the samples never exist in full. Every field is
    a leaf, the sizes included: one compiled :meth:`BoundPlan.bound` serves every n.

    Attributes:
      counts_p, counts_q: linear-binning counts on ``grid`` (shape ``grid.shape``), or counts
        of the codes ``[0, size)`` (discrete), float64.
      n_p, n_q: sample sizes (integer scalars); eq. (9) divides by them.
      outside: ``(2,)`` numbers of P and Q samples that fell outside the grid or support.
      grid: the :class:`~rdpjax.estimator.grid.Grid` (``None`` for discrete data).
      bandwidth: ``(d,)`` KDE bandwidths (zeros for discrete data).
      floor, beta: τ and β of the softmax floor (13).
    """

    counts_p: Array
    counts_q: Array
    n_p: Array
    n_q: Array
    outside: Array
    grid: Grid | None
    bandwidth: Array
    floor: Array
    beta: Array


@pytree_dataclass(
    static=(
        "discrete",
        "shape",
        "pad",
        "half_width",
        "both_directions",
        "variance",
        "second_order",
        "defaults",
    )
)
class BoundPlan:
    """Everything static about a bound computation, fixed from data by :func:`plan_bound`.

    Calling the plan on samples of the planned sizes returns a :class:`Bound`; the call is
    jittable and vmappable (e.g. over replications drawn inside a ``vmap``). It must run inside
    ``rdpjax.float64()``. The call is two steps, usable separately: :meth:`bin` (samples →
    :class:`Binned`, cost O(n)) and :meth:`bound` (:class:`Binned` → :class:`Bound`, cost
    O(L · g log g) for L orders on g grid points, independent of n).
    """

    lam: Array
    alpha: Array
    bandwidth: ArrayLike | None
    floor: Array | None
    beta: Array | None
    discrete: bool
    shape: tuple[int, ...]
    pad: tuple[int, ...]
    half_width: tuple[int, ...]
    both_directions: bool
    variance: str
    second_order: bool
    defaults: Defaults

    def __call__(self, p: Array, q: Array) -> Bound:
        """Bound from samples (continuous) or integer codes in ``[0, shape[0])`` (discrete)."""
        return self.bound(self.bin(p, q))

    def bin(self, p: Array, q: Array) -> Binned:
        """Resolve the settings and bin: eq. (9) counts, or the linear binning behind eq. (10).

        The settings come from the samples; the grid spans the pooled data range plus the kernel
        margin. Samples outside the grid or support are counted in ``outside`` and not binned.
        Samples drawn in the same program (a replication study) are best passed through
        :func:`rdpjax.stream.bound_of_draws`, which writes them to memory first on the CPU.
        """
        n_p, n_q = p.shape[0], q.shape[0]
        if self.discrete:
            floor, beta = discrete_settings(min(n_p, n_q), self.floor, self.beta, self.defaults)
            return self.bin_padded(p, q, n_p, n_q, (None, floor, beta))
        p, q = p.reshape(n_p, -1), q.reshape(n_q, -1)
        settings = continuous_settings(p, q, self.bandwidth, self.floor, self.beta, self.defaults)
        return self.bin_padded(p, q, n_p, n_q, settings)

    def bin_padded(
        self,
        p: Array,
        q: Array,
        n_p: int | Array,
        n_q: int | Array,
        settings: tuple[Array | None, Array, Array] | None = None,
        span: tuple[Array, Array] | None = None,
        mesh: Mesh | None = None,
    ) -> Binned:
        """:meth:`bin` of the first ``n_p`` rows of ``p`` and ``n_q`` of ``q`` (the rest: padding).

        The sizes may be traced; the padding is NaN (continuous) or codes ≥ the support size
        (discrete), neither binned nor counted. One compiled call then serves every n up to the
        arrays' lengths (:func:`lower_bound` pads to :func:`rdpjax.estimator.grid.bucket_size`).

        Args:
          p: samples of P, or integer codes (discrete), padded as above.
          q: samples (or codes) of Q, padded the same way.
          n_p: the number of real samples in ``p``.
          n_q: the number of real samples in ``q``.
          settings: ``(bandwidth, floor, beta)`` already resolved for these samples
            (:func:`rdpjax.estimator.settings.padded_settings`; ``bandwidth`` is ``None`` for
            discrete data), or ``None`` (discrete data only): settings from the sizes.
          span: continuous data only: ``(lo, hi)``, the pooled per-axis minimum and maximum of
            the real samples, when the caller has them (:func:`rdpjax.lower_bound` takes them on
            the host while checking the samples); default: computed here.
          mesh: continuous data only: a one-axis mesh whose devices each bin a block of the
            samples (:func:`rdpjax.estimator.binning.linear_binning`); not inside a ``vmap``
            or ``shard_map`` of replications.
        """
        rows_p, rows_q = p.shape[0], q.shape[0]
        padded = not (
            isinstance(n_p, int) and n_p == rows_p and isinstance(n_q, int) and n_q == rows_q
        )
        sizes = dict(n_p=jnp.asarray(n_p, jnp.int64), n_q=jnp.asarray(n_q, jnp.int64))
        if self.discrete:
            if settings is None:
                settings = (
                    None,
                    *discrete_settings(jnp.minimum(n_p, n_q), self.floor, self.beta, self.defaults),
                )
            _, floor, beta = settings
            size = self.shape[0]
            counts_p, counts_q = count_codes(p, size), count_codes(q, size)
            return Binned(
                counts_p=counts_p,
                counts_q=counts_q,
                outside=jnp.stack([n_p - counts_p.sum(), n_q - counts_q.sum()]),
                grid=None,
                bandwidth=jnp.zeros(1, jnp.float64),
                floor=floor,
                beta=beta,
                **sizes,
            )
        if settings is None:
            raise ValueError("bin_padded: continuous samples need their settings (a bandwidth).")
        bandwidth, floor, beta = settings
        if bandwidth is None:
            raise ValueError("bin_padded: continuous samples need their settings (a bandwidth).")
        p, q = p.reshape(rows_p, -1), q.reshape(rows_q, -1)
        if span is None:
            span = _pooled_span(p, q, n_p, n_q, padded)
        lo, hi = (jnp.asarray(s, jnp.float64) for s in span)
        grid = grid_from_range(lo, hi, self.shape, self.pad)
        # Eq. (10) on the grid; the layout keeps every sample on it, so p̂·Δ is a pmf. The
        # padding (NaN) lands outside the grid and is taken off the outside counts.
        (counts_p, out_p), (counts_q, out_q) = (
            linear_binning(x, grid, chunk_size=IN_MEMORY_CHUNK, mesh=mesh) for x in (p, q)
        )
        return Binned(
            counts_p=counts_p,
            counts_q=counts_q,
            outside=jnp.stack([out_p - (rows_p - n_p), out_q - (rows_q - n_q)]),
            grid=grid,
            bandwidth=bandwidth,
            floor=floor,
            beta=beta,
            **sizes,
        )

    def bound(self, binned: Binned) -> Bound:
        """The bound (16) from binned samples: densities, divergence, variance, all orders."""
        n_p = binned.n_p.astype(jnp.float64)
        n_q = binned.n_q.astype(jnp.float64)
        counts_p, counts_q = binned.counts_p, binned.counts_q
        floor, beta, bandwidth = binned.floor, binned.beta, binned.bandwidth
        unit_floor, unit_beta = floor, beta
        if self.discrete:
            fp = counts_p / n_p  # Eq. (9)
            fq = counts_q / n_q  # Eq. (9)
            ops = Smoothing()
            pmf_p, pmf_q = fp, fq
            half = jnp.stack([fp, fq]) if self.second_order else None
        else:
            grid = binned.grid
            if grid is None:
                raise ValueError("a continuous plan needs binned data on a grid.")
            # Outputs of extreme magnitude are bounded in units of a power of two (exact).
            grid, shift = in_bounded_units(grid)
            total = jnp.sum(shift)
            unit_floor, unit_beta = jnp.ldexp(floor, -total), jnp.ldexp(beta, total)
            ops = Smoothing(
                grid, jnp.ldexp(jnp.broadcast_to(bandwidth, shift.shape), shift), self.half_width
            )
            # Eq. (10) for both samples, with the second order's S′π, in one batched FFT.
            dens, pmfs, half = ops.densities(jnp.stack([counts_p, counts_q]), self.second_order)
            fp, fq = dens
            pmf_p, pmf_q = pmfs

        if self.discrete:
            support = jnp.sum((counts_p > 0) | (counts_q > 0)).astype(jnp.int64)
        else:
            support = jnp.asarray(math.prod(self.shape), jnp.int64)
        lam = jnp.asarray(self.lam, jnp.float64)
        n_bounds = lam.shape[0] * (2 if self.both_directions else 1)
        level = self.alpha / n_bounds
        z = ndtri(level)  # Φ⁻¹(α/K) < 0

        def bound_on(
            num: Array,
            den: Array,
            pmfs: tuple[Array, Array],
            sizes: tuple[Array, Array],
            halves: tuple[Array, Array] | None,
        ) -> tuple[Array, Array, Array, Array]:
            """Estimate, standard error, bias and bound of D_λ(num ‖ den_τ), all λ."""
            est, se, bias = delta_method(
                num, den, pmfs, sizes, halves, lam, unit_floor, unit_beta, ops, self.variance
            )
            return est, se, bias, est - bias + z * se  # Eq. (16), bias-corrected

        if self.both_directions:
            # Both directions as one batched computation (a vmap, not a second copy of the
            # program: half the compile time); per λ the larger bound is reported.
            parts = jax.vmap(bound_on)(
                jnp.stack([fp, fq]),
                jnp.stack([fq, fp]),
                (jnp.stack([pmf_p, pmf_q]), jnp.stack([pmf_q, pmf_p])),
                (jnp.stack([n_p, n_q]), jnp.stack([n_q, n_p])),
                None if half is None else (half, half[::-1]),
            )
            rev = parts[3][1] > parts[3][0]
            est, se, bias, lower = (jnp.where(rev, a[1], a[0]) for a in parts)
            direction = rev.astype(jnp.int32)
        else:
            halves = None if half is None else (half[0], half[1])
            est, se, bias, lower = bound_on(fp, fq, (pmf_p, pmf_q), (n_p, n_q), halves)
            direction = jnp.zeros(lam.shape, jnp.int32)
        return Bound(
            lam=lam,
            estimate=est,
            lower=lower,
            std_error=se,
            bias=bias,
            direction=direction,
            bandwidth=bandwidth,
            floor=floor,
            beta=beta,
            n_p=binned.n_p,
            n_q=binned.n_q,
            support=support,
            outside=binned.outside,
            alpha=jnp.asarray(self.alpha, jnp.float64),
            level=jnp.asarray(level, jnp.float64),
            discrete=self.discrete,
            n_bounds=n_bounds,
            both_directions=self.both_directions,
            variance=self.variance,
            second_order=self.second_order,
            grid_shape=self.shape,
        )
