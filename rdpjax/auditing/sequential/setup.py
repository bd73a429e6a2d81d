"""The settings of every look of a sequential audit, fixed before its draws: :class:`LookSetup`.

:func:`setup_looks` makes it from the schedule and, for continuous outputs, an independent pilot
(the argument that this keeps every look valid is in :mod:`rdpjax.auditing.sequential.engine`,
"Settings fixed in advance"): the kind of counting, the grid (one for every look:
:func:`grid_layout_for_looks`) and the bandwidth, floor and β of each look. Discrete outputs
need no pilot; their tables of the codes, values or rows seen grow as the batches come
(:func:`rdpjax.auditing.sequential.engine.add_batch`), so a :class:`LookSetup` is mutable, and it
is saved with the checkpoint (:mod:`rdpjax.auditing.sequential.state`) as JSON.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.auditing.sequential.options import LookOptions
from rdpjax.auditing.sequential.schedule import Schedule
from rdpjax.estimator.api import DEFAULTS
from rdpjax.estimator.grid import (
    CELLS_PER_BANDWIDTH,
    KERNEL_RADIUS,
    MAX_GRID_SIZE,
    PAD_QUANTUM,
    bucket_size,
    grid_from_range,
)
from rdpjax.estimator.inputs import check_bandwidth
from rdpjax.estimator.settings import discrete_settings, scheduled_settings
from rdpjax.estimator.support import looks_discrete

__all__ = ["DEFAULT_PILOT", "LookSetup", "grid_layout_for_looks", "setup_looks"]

KINDS = ("continuous", "discrete")


@dataclasses.dataclass
class LookSetup:
    """The settings of every look, fixed before the certifying draws (JSON-ready values).

    Attributes:
      kind: ``"continuous"`` (outputs binned onto one grid) or ``"discrete"`` (outputs counted).
      floor: the floor τ of each look.
      beta: the β of each look.
      dim: continuous: the outputs' dimension d (1 to 3); ``None`` for discrete outputs.
      shape: continuous: grid points per axis.
      pad: continuous: margin cells per axis (≥ 5 of the first look's bandwidths).
      low: continuous: the grid's first point per axis.
      spacing: continuous: the grid's cell width per axis.
      bandwidth: continuous: ``(looks, d)`` bandwidths, one row per look.
      codes: discrete integer codes: one more than the largest code seen so far (the counts'
        length while codes index them directly).
      values: discrete: the table of the values seen, in the order first seen, once one is
        needed (real outputs with few values, or integers outside ``[0, MAX_CODES)``); else
        ``None``.
      rows: vectors of codes: the table of the rows seen (each a joint outcome); else ``None``.
    """

    kind: str
    floor: list[float]
    beta: list[float]
    dim: int | None = None
    shape: list[int] | None = None
    pad: list[int] | None = None
    low: list[float] | None = None
    spacing: list[float] | None = None
    bandwidth: list[list[float]] | None = None
    codes: int = 0
    values: list[Any] | None = None
    rows: list[list[Any]] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}.")

    @property
    def discrete(self) -> bool:
        """Whether the outputs are counted (codes, values or rows) rather than binned."""
        return self.kind == "discrete"

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> LookSetup:
        """The setup of a checkpoint's JSON record (:func:`dataclasses.asdict`'s fields)."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(record) - known)
        if unknown:
            raise ValueError(f"a look setup has no field {', '.join(unknown)}.")
        return cls(**record)


DEFAULT_PILOT = 64
"""Outputs per side of the pilot of continuous outputs (drawn once, not certified). Small,
because draws may be expensive: it fixes only the grid's range (outputs beyond the range widened
by half its width on each side are clamped onto its edge, which keeps the bound valid) and the
scale behind the bandwidth and floor schedule."""


def _ceil_to(value: float, quantum: int) -> int:
    return int(-(-math.ceil(value) // quantum) * quantum)


def grid_layout_for_looks(lo, hi, h_fine, h_wide):
    """One grid for every look: ``(shape, pad, lo, hi)``, the interior ``[lo, hi]`` widened.

    Cells of ``h_fine / 16`` (the last look's bandwidth) unless that needs more than
    :data:`rdpjax.estimator.grid.MAX_GRID_SIZE` points; a margin of ``pad`` cells ≥ ``5 h_wide``
    (the first look's kernel), a multiple of 16. The size is rounded up by
    :func:`rdpjax.estimator.grid.bucket_size` and the interior widened symmetrically to fill it,
    so that the layout depends only on the bucket of ``width / h_fine`` and on ``h_wide /
    h_fine`` (fixed by the schedule): audits on other pilots share compiled programs.
    """
    d = len(lo)
    cap = MAX_GRID_SIZE.get(d, 128)
    shape, pad, new_lo, new_hi = [], [], [], []
    for k in range(d):
        width = float(hi[k] - lo[k])
        dx = float(h_fine[k]) / CELLS_PER_BANDWIDTH
        p = _ceil_to(KERNEL_RADIUS * float(h_wide[k]) / dx, PAD_QUANTUM)
        size = bucket_size(math.ceil(width / dx) + 1 + 2 * p)
        if size > cap:  # coarser cells: the margin (in cells) still holds 5 h_wide
            size = max(cap, 2 * p + 2)
            dx = width / (size - 1 - 2 * p)
        extent = (size - 1 - 2 * p) * dx  # ≥ width
        centre = 0.5 * (float(lo[k]) + float(hi[k]))
        shape.append(int(size))
        pad.append(int(p))
        new_lo.append(centre - 0.5 * extent)
        new_hi.append(centre + 0.5 * extent)
    return tuple(shape), tuple(pad), np.asarray(new_lo), np.asarray(new_hi)


def setup_looks(source, schedule: Schedule, options: LookOptions) -> tuple[LookSetup, int]:
    """The settings of every look, fixed before the certifying draws, and the pilot size.

    The settings (:mod:`rdpjax.auditing.sequential.engine`, "Settings fixed in advance") come as
    a :class:`LookSetup`, with the pilot size per side that was drawn for them (0: discrete).
    """
    sizes = np.asarray(schedule.sizes, np.float64)
    floor, beta = options.floor, options.beta
    if source.discrete:
        setup = _discrete_setup(sizes, options)
        if getattr(source, "vectors", False):  # vectors of codes: a table of the rows seen
            setup.rows = []
        return setup, 0
    pilot = options.pilot
    pilot = DEFAULT_PILOT if pilot is None else check_int(pilot, "pilot", 8)
    margin = float(options.margin)
    p, q = (np.asarray(a, np.float64) for a in source.pilot(pilot))
    p, q = p.reshape(pilot, -1), q.reshape(pilot, -1)
    if p.shape[1] == 1 and getattr(source, "auto_discrete", False) and looks_discrete(p, q):
        # A few distinct values (point masses, as rdpjax.lower_bound would see them): relative
        # frequencies on a table of the values seen, which grows as new ones appear.
        values = np.unique(np.concatenate([p, q])).tolist()
        return dataclasses.replace(_discrete_setup(sizes, options), values=values), pilot
    d = p.shape[1]
    if not 1 <= d <= 3:
        from rdpjax.auditing.draws import OutputDimensionError

        raise OutputDimensionError(d, "on the pilot, before the looks")
    bandwidth = check_bandwidth(options.bandwidth, d)
    lo, hi = np.minimum(p.min(0), q.min(0)), np.maximum(p.max(0), q.max(0))
    if np.any(hi <= lo):
        raise ValueError(
            "the pilot draw has zero spread: a kernel density needs varied values (for integer "
            "outputs, pass discrete=True)."
        )
    lo, hi = lo - margin * (hi - lo), hi + margin * (hi - lo)
    with float64():
        h, floors, betas = (
            np.asarray(a)
            for a in scheduled_settings(p, q, sizes, bandwidth, floor, beta, defaults=DEFAULTS)
        )
    if not np.all(np.isfinite(h) & (h > 0)):
        raise ValueError(
            "the pilot draw has no spread to scale a bandwidth by (its robust scale is 0); "
            "pass bandwidth= or a larger pilot=."
        )
    shape, pad, lo, hi = grid_layout_for_looks(lo, hi, h.min(0), h.max(0))
    with float64():
        grid = grid_from_range(lo, hi, shape, pad)
    setup = LookSetup(
        kind="continuous",
        floor=floors.tolist(),
        beta=betas.tolist(),
        dim=d,
        shape=list(shape),
        pad=list(pad),
        low=np.asarray(grid.low).tolist(),
        spacing=np.asarray(grid.spacing).tolist(),
        bandwidth=h.tolist(),
    )
    return setup, pilot


def _discrete_setup(sizes: np.ndarray, options: LookOptions) -> LookSetup:
    """The settings of every look of relative frequencies: the floor and β at each n_k."""
    if options.bandwidth is not None:
        raise ValueError("bandwidth applies to continuous outputs only.")
    floor, beta = options.floor, options.beta
    with float64():
        settings = [discrete_settings(float(n), floor, beta, DEFAULTS) for n in sizes]
    return LookSetup(
        kind="discrete",
        floor=[float(f) for f, _ in settings],
        beta=[float(b) for _, b in settings],
    )
