"""The one driver of the stream: from a source of draws to a :class:`rdpjax.Bound`.

Every streamed bound runs the same four steps, whatever draws the outputs
(:mod:`rdpjax.stream.sources`): the cheap checks of the options; the source's output kind (and,
for a black box, its pilot); the grid and settings fixed from the pilot before any counted draw
exists (:func:`rdpjax.stream.pilot.fix_settings`, the data independence a valid bound needs);
the counts of ``n`` draws a side on that grid; eq. (16) of Kutta, Askin, Dunsche,
arXiv:2212.04739v3 from the two histograms (:func:`rdpjax.stream.from_counts.bound_from_counts`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rdpjax._internal.programs import trim_programs
from rdpjax._precision import float64
from rdpjax.estimator.api import bound_program
from rdpjax.estimator.bound_plan import Bound
from rdpjax.estimator.grid import check_layout
from rdpjax.estimator.inputs import check_grid_size
from rdpjax.estimator.options import BoundOptions
from rdpjax.estimator.planner import PILOT_PROGRAMS
from rdpjax.stream.batches import batch_counts, bin_batch
from rdpjax.stream.from_counts import bound_from_counts
from rdpjax.stream.options import StreamOptions
from rdpjax.stream.pilot import check_sizes, fix_settings, streamable
from rdpjax.stream.scan import _stream_side
from rdpjax.stream.sources import Source, Tally

__all__ = [
    "STREAM_BUDGET",
    "STREAM_PROGRAMS",
    "bound_of_source",
    "check_bound_options",
    "tally_bound",
]

STREAM_PROGRAMS = (bin_batch, batch_counts, _stream_side, *PILOT_PROGRAMS, bound_program)
"""The jitted functions a streamed bound compiles for its grid and sizes (trimmed together)."""

STREAM_BUDGET = 256
"""Programs one of :data:`STREAM_PROGRAMS` may hold before all are dropped: thousands exhausted
the memory maps; a few hundred cost little memory, and a process that runs many kinds of
bound (a test suite) seldom has to compile them again."""


def bound_of_source(
    source: Source,
    lam: float | Sequence[float],
    *,
    n: int | tuple[int, int],
    alpha: float,
    both_directions: bool,
    options: BoundOptions,
    stream: StreamOptions,
) -> Bound:
    """A lower bound on ``D_λ(P‖Q)`` from ``n`` draws a side of ``source``, never all in memory.

    Args:
      source: a :class:`~rdpjax.stream.sources.Source` (JAX samplers or a numpy black box).
      lam: an order λ > 1 or a sequence of orders.
      n: draws per side, or a pair ``(n_p, n_q)``.
      alpha: family-wise error level in (0, 0.5).
      both_directions: also bound ``D_λ(Q‖P)`` and report, per λ, the larger bound.
      options: the estimator's :class:`rdpjax.BoundOptions` (no quantile map: ``"auto"`` is
        none, ``"quantile"`` an error).
      stream: the :class:`~rdpjax.stream.options.StreamOptions`.

    Returns:
      A :class:`rdpjax.Bound` (numpy leaves); ``outside`` holds the draws clamped onto the edge.
    """
    options = streamable(options)
    check_layout(options.layout)
    sizes = check_sizes(n)
    with float64():
        # Cheap checks before the source is drawn from at all (a black box may be slow).
        check_bound_options(lam, alpha, both_directions, options)
        kind = source.kind(options, stream)
        # Warnings point at the caller of the public function that called this one.
        return tally_bound(
            source, lam, kind=kind, sizes=sizes, alpha=alpha, both_directions=both_directions,
            options=options, stream=stream, stacklevel=4,
        )[0]  # fmt: skip


def check_bound_options(lam, alpha: float, both_directions: bool, options: BoundOptions) -> None:
    """The checks of a streamed bound's options that need no draw (``ValueError`` if wrong)."""
    options.plan_options(lam, alpha=alpha, both_directions=both_directions, discrete=False)
    check_grid_size(options.grid_size)


def tally_bound(
    source: Source,
    lam: float | Sequence[float],
    *,
    kind: tuple[bool, int],
    sizes: tuple[int, int],
    alpha: float,
    both_directions: bool,
    options: BoundOptions,
    stream: StreamOptions,
    cells: np.ndarray | None = None,
    stacklevel: int = 3,
) -> tuple[Bound, Tally]:
    """The bound of ``sizes`` draws a side, and what else the same pass counted.

    Fixes the grid and settings from ``source.pilot()`` (the source's :meth:`kind` already
    called), then one pass of the source counts the draws on the grid and, when ``cells`` (sorted
    edges) are given, on the rejection sets' cells (:meth:`Source.tally`). Runs inside
    ``rdpjax.float64()``; ``options`` already :func:`~rdpjax.stream.pilot.streamable`.
    """
    # Each new grid or size compiles new programs: keep their number bounded.
    trim_programs(STREAM_PROGRAMS, STREAM_BUDGET)
    fixed = fix_settings(
        source.pilot,
        lam,
        kind=kind,
        sizes=sizes,
        alpha=alpha,
        both_directions=both_directions,
        options=options,
        stream=stream,
    )
    tally = source.tally(fixed, sizes, stream, cells=cells)
    assert tally.counts is not None
    bound = bound_from_counts(
        fixed, tally.counts, tally.outside, sizes, outside=stream.outside, stacklevel=stacklevel
    )
    return bound, tally
