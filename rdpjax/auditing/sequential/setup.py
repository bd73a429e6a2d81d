"""The settings of every look of a sequential audit, fixed before its draws: :class:`LookSetup`.

:func:`setup_looks` makes it from the schedule and, for continuous outputs, an independent pilot
(the argument that this keeps every look valid is in :mod:`rdpjax.auditing.sequential.engine`,
"Settings fixed in advance"): the kind of counting, the grid (one for every look:
:func:`rdpjax.estimator.planner.grid_layout_for_looks`) and the bandwidth, floor and β of each
look, from the one planner (:func:`rdpjax.estimator.planner.plan_draws`, the pilot its
evidence). A :class:`LookSetup` is the JSON form of that plan; :func:`look_plan` turns it back
into the :class:`~rdpjax.estimator.planner.DrawPlan` of one look. Discrete outputs
need no pilot; their tables of the codes, values or rows seen grow as the batches come
(:func:`rdpjax.auditing.sequential.engine.add_batch`), so a :class:`LookSetup` is mutable, and it
is saved with the checkpoint (:mod:`rdpjax.auditing.sequential.state`) as JSON.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.auditing.sequential.options import LookOptions
from rdpjax.auditing.sequential.schedule import Schedule
from rdpjax.estimator.grid import Grid
from rdpjax.estimator.inputs import check_bandwidth
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.planner import DrawPlan, Evidence, Layout, PilotScale, plan_draws
from rdpjax.estimator.support import looks_discrete

__all__ = ["DEFAULT_PILOT", "LookSetup", "look_plan", "setup_looks"]

_OPTIONS = BoundOptions()
"""The estimator's options behind the looks' plan: the default rules (:class:`rdpjax.Defaults`);
the bandwidth, floor and β a sequential audit takes come from its :class:`LookOptions`."""

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

    def layout(self) -> Layout:
        """Continuous outputs: the :class:`~rdpjax.estimator.planner.Layout` of a batch's bins."""
        shape, pad = tuple(self.shape), tuple(self.pad)
        interior = tuple((p, s - 1 - p) for s, p in zip(shape, pad, strict=True))
        return Layout(discrete=False, shape=shape, interior=interior)

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


def setup_looks(source, schedule: Schedule, options: LookOptions) -> tuple[LookSetup, int]:
    """The settings of every look, fixed before the certifying draws, and the pilot size.

    The settings (:mod:`rdpjax.auditing.sequential.engine`, "Settings fixed in advance") come as
    a :class:`LookSetup`, with the pilot size per side that was drawn for them (0: discrete).
    """
    sizes = schedule.sizes
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
    evidence = Evidence(discrete=False, span=(lo, hi), scale=PilotScale(p, q))
    with float64():
        drawn = plan_draws(
            evidence, schedule.sizes, _OPTIONS, bandwidth=bandwidth, floor=floor, beta=beta,
            looks=True,
        )  # fmt: skip
    h, floors, betas = (np.asarray(a) for a in (drawn.bandwidths, drawn.floors, drawn.betas))
    grid = drawn.grid
    setup = LookSetup(
        kind="continuous",
        floor=floors.tolist(),
        beta=betas.tolist(),
        dim=d,
        shape=list(drawn.layout.shape),
        pad=list(drawn.pad),
        low=np.asarray(grid.low).tolist(),
        spacing=np.asarray(grid.spacing).tolist(),
        bandwidth=h.tolist(),
    )
    return setup, pilot


def _discrete_setup(sizes, options: LookOptions) -> LookSetup:
    """The settings of every look of relative frequencies: the floor and β at each n_k."""
    if options.bandwidth is not None:
        raise ValueError("bandwidth applies to continuous outputs only.")
    with float64():
        drawn = plan_draws(
            Evidence(discrete=True), sizes, _OPTIONS, floor=options.floor, beta=options.beta,
            looks=True,
        )  # fmt: skip
    return LookSetup(
        kind="discrete",
        floor=[float(f) for f in np.asarray(drawn.floors)],
        beta=[float(b) for b in np.asarray(drawn.betas)],
    )


def look_plan(setup: LookSetup, k: int, n: int, common: dict[str, Any], size: int = 0) -> DrawPlan:
    """The :class:`~rdpjax.estimator.planner.DrawPlan` of look ``k`` (``n`` a side) of ``setup``.

    ``common`` are the look's :func:`rdpjax.estimator.inputs.plan_options` keywords (its orders
    and level); ``size``: discrete outputs: the number of codes the counts hold (those seen so
    far, padded).
    """
    floors = jnp.asarray(setup.floor[k : k + 1], jnp.float64)
    betas = jnp.asarray(setup.beta[k : k + 1], jnp.float64)
    if setup.discrete:
        layout = Layout(discrete=True, shape=(size,))
        drawn = DrawPlan(layout, (0,), (n,), jnp.zeros((1, 1), jnp.float64), floors, betas)
        return drawn.with_bound(common)
    layout = setup.layout()
    low, spacing = np.asarray(setup.low), np.asarray(setup.spacing)
    drawn = DrawPlan(
        layout=layout,
        half_width=tuple(setup.pad),
        sizes=(n,),
        bandwidths=jnp.asarray(setup.bandwidth[k : k + 1], jnp.float64),
        floors=floors,
        betas=betas,
        grid=Grid(low=jnp.asarray(low), spacing=jnp.asarray(spacing), shape=layout.shape),
    )
    return drawn.with_bound(common)
