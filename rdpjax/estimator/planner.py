"""One planner: what is fixed before the counted draws (:class:`DrawPlan`, :func:`plan_draws`).

Every route from outputs to a Rényi bound fixes the same things before it counts an output,
and fixes them here:

* the samples in memory (:func:`rdpjax.lower_bound`, :func:`rdpjax.plan_bound`;
  :mod:`rdpjax.estimator.from_samples`), whose extremes and strided subsample are read first;
* a stream (:mod:`rdpjax.stream`), from a pilot draw;
* a sequential audit (:mod:`rdpjax.auditing.sequential`), from a pilot draw, for every look.

What each route knows before its counted draws is its :class:`Evidence`: the range the grid's
interior must cover and a scale that gives the settings (h, τ, β) at a sample size
(:class:`SubsampleScale` in memory, :class:`PilotScale` from a pilot), or the codes' support.
:func:`plan_draws` turns it into a :class:`DrawPlan`: what an output is counted onto (the
:class:`Layout`, the grid or the codes) and the settings of each planned sample size — one size
for a fixed n, one per look for a sequential audit. The grid's layout rule is the fixed-n one
(:func:`rdpjax.estimator.grid.plan_layout`) for a fixed n, and :func:`grid_layout_for_looks`
(one grid for every look) for the looks. Fewer than :data:`MIN_SAMPLES` outputs a side are
refused. The data independence a valid bound needs — nothing
here reads a counted draw — is argued in :mod:`rdpjax.stream.driver` (the pilot) and in
:mod:`rdpjax.auditing.sequential.engine` ("Settings fixed in advance").
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import scoped_float64
from rdpjax._typing import Array, ArrayLike, typed_jit
from rdpjax.estimator.bound_plan import BoundPlan
from rdpjax.estimator.grid import (
    CELLS_PER_BANDWIDTH,
    KERNEL_RADIUS,
    MAX_GRID_SIZE,
    PAD_QUANTUM,
    Grid,
    bucket_size,
    grid_from_range,
    plan_layout,
)
from rdpjax.estimator.inputs import check_grid_size
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.settings import (
    Defaults,
    continuous_settings,
    discrete_settings,
    padded_settings,
    scheduled_settings,
)

__all__ = [
    "MIN_SAMPLES",
    "PILOT_PROGRAMS",
    "DrawPlan",
    "Evidence",
    "Layout",
    "PilotScale",
    "SubsampleScale",
    "grid_layout_for_looks",
    "plan_draws",
]


@dataclasses.dataclass(frozen=True)
class Layout:
    """Static description of what an output is counted onto."""

    discrete: bool
    shape: tuple[int, ...]
    interior: tuple[tuple[int, int], ...] | None = None  # continuous: the data range, in cells


Given = tuple[Any, Any, Any]
"""The bandwidth, floor and β given (each ``None``: from the rules at each size)."""

Settings = tuple[jax.Array, jax.Array, jax.Array]
"""``(h, τ, β)``: ``(K, d)`` bandwidths, ``(K,)`` floors and ``(K,)`` β, one row a look."""


class SubsampleScale(NamedTuple):
    """The scale of samples in memory: their strided subsamples, padded (``scale_subsample``).

    The settings come from :func:`rdpjax.estimator.settings.padded_settings`, one compiled
    program for every n whose subsamples share a padded length.
    """

    sub_p: Any
    m_p: int
    sub_q: Any
    m_q: int

    def settings(
        self, sizes: Sequence[int], given: Given, defaults: Defaults, looks: bool
    ) -> Settings:
        """``(h, τ, β)`` with a leading axis of one look: samples in memory have one size."""
        (n,) = sizes
        h, tau, b = padded_settings(
            self.sub_p, self.m_p, self.sub_q, self.m_q, n, n, *given, defaults=defaults
        )
        return h[None], tau[None], b[None]


@typed_jit(static_argnames=("defaults", "n"))
def _pilot_settings(
    pilot_p: Array,
    pilot_q: Array,
    bandwidth: ArrayLike | None,
    floor: ArrayLike | None,
    beta: ArrayLike | None,
    *,
    defaults: Defaults,
    n: int,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    # One compiled call instead of a few dozen eager ones on every streamed bound.
    return continuous_settings(pilot_p, pilot_q, bandwidth, floor, beta, defaults, n=n)


class PilotScale(NamedTuple):
    """The scale of a pilot draw ``(m, d)`` a side (host float64), for draws not yet made."""

    p: np.ndarray
    q: np.ndarray

    def settings(
        self, sizes: Sequence[int], given: Given, defaults: Defaults, looks: bool
    ) -> Settings:
        """``(h, τ, β)`` at each of ``sizes``, a leading axis of one entry a size.

        A fixed n (``looks`` false, one size) takes the size as a compile-time constant; looks
        take their sizes as one array (:func:`rdpjax.estimator.settings.scheduled_settings`).
        """
        if not looks:
            p, q = cast(Array, self.p), cast(Array, self.q)  # numpy, as jit takes them
            h, tau, b = _pilot_settings(p, q, *given, defaults=defaults, n=int(sizes[0]))
            return h[None], tau[None], b[None]
        p, q, n = (cast(Array, a) for a in (self.p, self.q, np.asarray(sizes, np.float64)))
        return scheduled_settings(p, q, n, *given, defaults=defaults)


class Evidence(NamedTuple):
    """What a route knows of its outputs before the counted draws.

    Attributes:
      discrete: whether the outputs are counted as codes (else binned onto a grid).
      span: continuous: ``(lo, hi)``, per axis, the range the grid's interior covers (host
        float64); discrete: ``None``.
      scale: continuous: a :class:`SubsampleScale` or :class:`PilotScale` (``None`` when every
        setting is given); discrete: ``None``.
      support: discrete: ``(low, size)``, the code counted in the first cell and the number
        of cells; ``None`` when the codes' table grows as they come (a sequential audit).
    """

    discrete: bool
    span: tuple[np.ndarray, np.ndarray] | None = None
    scale: SubsampleScale | PilotScale | None = None
    support: tuple[int, int] | None = None


_grid = typed_jit(static_argnames=("shape", "pad"))(grid_from_range)

MIN_SAMPLES = 20
"""The fewest outputs a side a Rényi bound is planned for.

Below it the bound's normal approximation is not calibrated: the default bound lay above the
truth (at some λ of 2, 5, 7) in 9% of 400 replications of a Gaussian shift at n = 2, 12% of a
Student-t₃ shift at n = 3, 9% at n = 5, and 10% of a Cauchy shift at n = 5; from n = 20 every
law of the panel (Gaussian, Laplace, Student-t₃ and Cauchy shifts, a mixture, a Poisson-subsampled
Gaussian, binomial codes) kept a simultaneous coverage ≥ 0.97 (``benchmarks/calibration/tiny_n.py``;
``docs/calibration.md``, "The fewest outputs")."""

PILOT_PROGRAMS = (_pilot_settings, _grid)
"""The jitted functions the planner compiles for a pilot's plan (a stream's, per grid layout and
size), kept within the stream's program budget (:data:`rdpjax.stream.driver.STREAM_PROGRAMS`)."""


@dataclasses.dataclass(frozen=True)
class DrawPlan:
    """Everything fixed before the counted draws: the one result of :func:`plan_draws`.

    Attributes:
      layout: what an output is counted onto (discrete codes or a grid's cells).
      half_width: the kernel's half-width in cells per axis (``(0,)`` for discrete outputs).
      sizes: the planned sample size of each look (one entry for a fixed n).
      bandwidths, floors, betas: the settings of each look: ``(K, d)`` bandwidths (zeros for
        discrete outputs), ``(K,)`` floors τ and ``(K,)`` β, float64.
      span: continuous: the grid's interior ``(lo, hi)`` per axis (host float64).
      grid: continuous: the :class:`~rdpjax.estimator.grid.Grid` a stream or the looks bin
        onto; ``None`` for discrete outputs, and for samples in memory, whose binning program
        lays the grid over ``span`` itself.
      low_code: discrete: the code counted in the first cell.
      plan: the :class:`BoundPlan` the bound uses (orders, level, the layout's static shape),
        or ``None`` until the orders and level are known (:meth:`with_bound`; a sequential
        audit makes one a look).
    """

    layout: Layout
    half_width: tuple[int, ...]
    sizes: tuple[int, ...]
    bandwidths: jax.Array
    floors: jax.Array
    betas: jax.Array
    span: tuple[np.ndarray, np.ndarray] | None = None
    grid: Grid | None = None
    low_code: int = 0
    plan: BoundPlan | None = None

    @property
    def pad(self) -> tuple[int, ...]:
        """Margin cells per axis (``(0,)`` for discrete outputs)."""
        if self.layout.interior is None:
            return (0,)
        return tuple(lo for lo, _ in self.layout.interior)

    @functools.cached_property
    def low(self) -> np.ndarray:
        """Host ``(d,)``: the grid's first point, or ``[low_code]`` (discrete); copied once."""
        if self.layout.discrete:
            return np.full(1, self.low_code, np.int64)
        return np.asarray(self._laid().low)

    @functools.cached_property
    def spacing(self) -> np.ndarray:
        """Host ``(d,)``: the grid's cell widths (ones for discrete outputs)."""
        return np.ones(1) if self.layout.discrete else np.asarray(self._laid().spacing)

    def _laid(self) -> Grid:
        if self.grid is None:
            raise ValueError("this plan laid no grid (plan_draws(…, lay_grid=False)).")
        return self.grid

    def settings(self, look: int = 0) -> tuple[jax.Array, jax.Array, jax.Array]:
        """``(h, τ, β)`` of look ``look`` (``h`` of shape ``(d,)``)."""
        return self.bandwidths[look], self.floors[look], self.betas[look]

    @property
    def bandwidth(self) -> jax.Array:
        """The single look's bandwidths ``(d,)`` (a plan of one size)."""
        return self.settings(self._only())[0]

    @property
    def floor(self) -> jax.Array:
        """The single look's floor τ."""
        return self.settings(self._only())[1]

    @property
    def beta(self) -> jax.Array:
        """The single look's β."""
        return self.settings(self._only())[2]

    def _only(self) -> int:
        if len(self.sizes) != 1:
            raise ValueError(f"this plan has {len(self.sizes)} looks: pass the look to settings().")
        return 0

    def with_bound(self, common: dict[str, Any], bandwidth: Any = None) -> DrawPlan:
        """This plan with its :class:`BoundPlan` (``common``: ``plan_options``' keywords)."""
        plan = BoundPlan(
            bandwidth=bandwidth,
            shape=self.layout.shape,
            pad=self.pad,
            half_width=self.half_width,
            **common,
        )
        return dataclasses.replace(self, plan=plan)

    def look(self, k: int, common: dict[str, Any]) -> DrawPlan:
        """The plan of look ``k`` alone, with its :class:`BoundPlan` from ``common``."""
        one = dataclasses.replace(
            self,
            sizes=(self.sizes[k],),
            bandwidths=self.bandwidths[k : k + 1],
            floors=self.floors[k : k + 1],
            betas=self.betas[k : k + 1],
        )
        return one.with_bound(common)


def _ceil_to(value: float, quantum: int) -> int:
    return int(-(-math.ceil(value) // quantum) * quantum)


def grid_layout_for_looks(
    lo: ArrayLike, hi: ArrayLike, h_fine: ArrayLike, h_wide: ArrayLike
) -> tuple[tuple[int, ...], tuple[int, ...], np.ndarray, np.ndarray]:
    """One grid for every look: ``(shape, pad, lo, hi)``, the interior ``[lo, hi]`` widened.

    Cells of ``h_fine / 16`` (the last look's bandwidth) unless that needs more than
    :data:`rdpjax.estimator.grid.MAX_GRID_SIZE` points; a margin of ``pad`` cells ≥ ``5 h_wide``
    (the first look's kernel), a multiple of 16. The size is rounded up by
    :func:`rdpjax.estimator.grid.bucket_size` and the interior widened symmetrically to fill it,
    so that the layout depends only on the bucket of ``width / h_fine`` and on ``h_wide /
    h_fine`` (fixed by the schedule): audits on other pilots share compiled programs.
    """
    lo_, hi_ = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    fine, wide = np.asarray(h_fine, np.float64), np.asarray(h_wide, np.float64)
    d = len(lo_)
    cap = MAX_GRID_SIZE.get(d, 128)
    shape: list[int] = []
    pad: list[int] = []
    new_lo: list[float] = []
    new_hi: list[float] = []
    for k in range(d):
        width = float(hi_[k] - lo_[k])
        dx = float(fine[k]) / CELLS_PER_BANDWIDTH
        p = _ceil_to(KERNEL_RADIUS * float(wide[k]) / dx, PAD_QUANTUM)
        size = bucket_size(math.ceil(width / dx) + 1 + 2 * p)
        if size > cap:  # coarser cells: the margin (in cells) still holds 5 h_wide
            size = max(cap, 2 * p + 2)
            dx = width / (size - 1 - 2 * p)
        extent = (size - 1 - 2 * p) * dx  # ≥ width
        centre = 0.5 * (float(lo_[k]) + float(hi_[k]))
        shape.append(int(size))
        pad.append(int(p))
        new_lo.append(centre - 0.5 * extent)
        new_hi.append(centre + 0.5 * extent)
    return tuple(shape), tuple(pad), np.asarray(new_lo), np.asarray(new_hi)


@scoped_float64
def plan_draws(
    evidence: Evidence,
    sizes: Sequence[int],
    options: BoundOptions,
    *,
    bandwidth: Any = None,
    floor: Any = None,
    beta: Any = None,
    looks: bool = False,
    lay_grid: bool = True,
) -> DrawPlan:
    """The one planner: a :class:`DrawPlan` from what is known before the counted draws.

    Args:
      evidence: the route's :class:`Evidence`.
      sizes: the sample size behind the settings' rates, one entry per look (a fixed n:
        ``(min(n_p, n_q),)``).
      options: the estimator's options (the grid size and layout, the
        :class:`~rdpjax.estimator.settings.Defaults`).
      bandwidth: the bandwidth given, checked (``None``: from the scale at each size).
      floor: the floor τ given (``None``: the default at each size).
      beta: the β given (``None``: ``1 / τ``).
      looks: the sizes are a sequential audit's looks: one grid for every look
        (:func:`grid_layout_for_looks`); else one size and the fixed-n layout
        (:func:`rdpjax.estimator.grid.plan_layout`, ``options.grid_size``, ``options.layout``).
      lay_grid: lay the :class:`~rdpjax.estimator.grid.Grid` over the span (continuous outputs;
        samples in memory let their binning program do it).

    Runs inside ``rdpjax.float64()`` (it enters it).
    """
    sizes = tuple(int(n) for n in sizes)
    check_grid_size(options.grid_size)  # the options' own errors first
    if min(sizes) < MIN_SAMPLES:
        raise ValueError(
            f"a Rényi bound needs at least {MIN_SAMPLES} outputs a side; got {min(sizes)}: below "
            "that its normal approximation is not calibrated (a Gaussian shift's bound lay above "
            "the truth in 9% of replications at 2 a side)."
        )
    defaults = options.defaults
    if evidence.discrete:
        settings = [discrete_settings(n, floor, beta, defaults) for n in sizes]
        low, size = (0, 0) if evidence.support is None else evidence.support
        return DrawPlan(
            layout=Layout(discrete=True, shape=(size,)),
            half_width=(0,),
            sizes=sizes,
            bandwidths=jnp.zeros((len(sizes), 1), jnp.float64),
            floors=jnp.stack([jnp.asarray(f, jnp.float64) for f, _ in settings]),
            betas=jnp.stack([jnp.asarray(b, jnp.float64) for _, b in settings]),
            low_code=int(low),
        )
    assert evidence.span is not None, "continuous evidence needs the range it covers"
    lo, hi = (np.asarray(a, np.float64) for a in evidence.span)
    d = len(lo)
    if evidence.scale is None:  # every setting given: the scale is not needed
        h = jnp.broadcast_to(jnp.asarray(bandwidth, jnp.float64), (len(sizes), d))
        tau = jnp.broadcast_to(jnp.asarray(floor, jnp.float64), (len(sizes),))
        b = 1.0 / tau if beta is None else jnp.broadcast_to(jnp.asarray(beta), (len(sizes),))
    else:
        h, tau, b = evidence.scale.settings(sizes, (bandwidth, floor, beta), defaults, looks)
    if not looks:
        if len(sizes) != 1:
            raise ValueError(f"a fixed n plans one size; got {len(sizes)} (pass looks=True).")
        shape, pad, half_width = plan_layout(
            lo, hi, np.asarray(h[0]), options.grid_size, options.layout
        )
    else:
        h_host = np.asarray(h)
        if not np.all(np.isfinite(h_host) & (h_host > 0)):
            raise ValueError(
                "the pilot draw has no spread to scale a bandwidth by (its robust scale is 0); "
                "pass bandwidth= or a larger pilot=."
            )
        shape, pad, lo, hi = grid_layout_for_looks(lo, hi, h_host.min(0), h_host.max(0))
        half_width = pad
    interior = tuple((p, s - 1 - p) for s, p in zip(shape, pad, strict=True))
    grid: Grid | None = None
    if lay_grid:
        # A stream's grid in one compiled call (kept in its program budget); the looks' op by op,
        # as they always were: XLA compiles the division by the static cell count differently,
        # and their saved grids (checkpoints) keep their last bits.
        grid = grid_from_range(lo, hi, shape, pad) if looks else _grid(lo, hi, shape=shape, pad=pad)
    return DrawPlan(
        layout=Layout(discrete=False, shape=shape, interior=interior),
        half_width=half_width,
        sizes=sizes,
        bandwidths=jnp.asarray(h, jnp.float64),
        floors=jnp.asarray(tau, jnp.float64),
        betas=jnp.asarray(b, jnp.float64),
        span=(lo, hi),
        grid=grid,
    )
