"""How draws are streamed into counts: one frozen options object, and the keyword router.

:class:`StreamOptions` holds what a streamed bound needs beyond the estimator's own settings
(:class:`rdpjax.BoundOptions`): where the grid comes from (a pilot draw, or a fixed range), what
happens to draws off it, how the draws are cut (chunks of a compiled scan, batches of a numpy
black box) and spread over devices, and whom to tell about progress. :func:`split_options`
lets a driver take either object or their fields by name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from rdpjax._validation import check_int
from rdpjax.estimator.binning import BINNING_METHODS
from rdpjax.estimator.options import BoundOptions, or_default, resolve_options

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_PILOT",
    "DEFAULT_STREAM_CHUNK",
    "Looks",
    "StreamOptions",
    "split_options",
]

DEFAULT_PILOT = 2**16
"""Pilot outputs per side: as many as :func:`rdpjax.lower_bound` uses for its scale anyway."""

DEFAULT_STREAM_CHUNK = 2**17
"""Samples drawn and binned per scan step (per device). On a 2-core CPU, streaming 1e8 per side
(``benchmarks/performance/throughput.py --stream-child 100000000 --chunk C --cpu-devices D``, the
second call) took 2.8 s at 2^16 and 2^17 against 3.1 s at 2^18 on two devices, and 3.3 s at 2^17
against 3.8–3.9 s at 2^16 and 2^18 on one (cache-resident temporaries; 2^20 was slower still). On a
GPU
larger chunks (2^22) amortize the per-step launch cost better."""

DEFAULT_BATCH = 10**6
"""Outputs per call of a numpy black box (per side): 8 MB of float64 scalars."""


@dataclasses.dataclass(frozen=True)
class StreamOptions:
    """The stream's settings (:mod:`rdpjax.stream`: draws, grid, outside mass).

    Attributes:
      grid: ``(low, high)`` (scalars or per axis) to fix the grid's range instead of taking it
        from the pilot (the bandwidth and floor still come from the pilot unless given).
      pilot: outputs per side of the pilot draw that fixes the grid, the discrete/continuous
        decision and the default bandwidth and floor; never reused in the bound. ``None``: the
        driver's default (:data:`DEFAULT_PILOT` for a stream; a sequential audit's own).
      margin: widening of the pilot range, in multiples of its width, per side.
      support_size: discrete codes lie in ``[0, support_size)``; default the pilot's largest
        code + 1 (a zoo mechanism: its alphabet).
      outside: ``"clip"`` (clamp onto the edge and count, default) or ``"raise"``.
      chunk: JAX samplers: samples drawn and binned per scan step, per device.
      batch_size: numpy black boxes: outputs per call of ``sample`` (the last may draw fewer).
      devices: JAX samplers: the devices to split the draws over
        (:func:`rdpjax.estimator.sharding.draw_mesh`): a list, a count, or ``None`` for all.
      binning: ``"scatter"`` (default) or ``"sort"`` (a workaround for slow GPU scatter-adds).
      project: numpy black boxes: a fixed function applied to every batch (pilot included)
        before binning, ``(m, ...)`` in, ``(m,)`` or ``(m, d ≤ 3)`` out (valid by data
        processing); a JAX sampler is projected by wrapping it.
      progress: ``progress(done, total)``, called as draws are binned with the outputs done over
        both sides and ``total = n_p + n_q`` (the last call has ``done = total``).
    """

    grid: Any = None
    pilot: int | None = None
    margin: float = 0.5
    support_size: int | None = None
    outside: str = "clip"
    chunk: int = DEFAULT_STREAM_CHUNK
    batch_size: int = DEFAULT_BATCH
    devices: Sequence[jax.Device] | int | None = None
    binning: str = "scatter"
    project: Callable[[Any], Any] | None = None
    progress: Callable[[int, int], None] | None = None

    def replace(self, **changes: Any) -> StreamOptions:
        """A copy with ``changes`` (checked as at construction)."""
        return dataclasses.replace(self, **changes)

    @property
    def pilot_size(self) -> int:
        """``pilot``, or :data:`DEFAULT_PILOT` when it is ``None``."""
        return DEFAULT_PILOT if self.pilot is None else self.pilot

    def __post_init__(self) -> None:
        if self.pilot is not None:
            check_int(self.pilot, "pilot", 2)
        check_int(self.chunk, "chunk", 1)
        check_int(self.batch_size, "batch_size", 1)
        if self.support_size is not None:
            check_int(self.support_size, "support_size", 1)
        if self.outside not in ("clip", "raise"):
            raise ValueError(f"outside must be 'clip' or 'raise'; got {self.outside!r}.")
        margin = self.margin
        if not (isinstance(margin, int | float) and math.isfinite(margin) and margin >= 0):
            raise ValueError(f"margin must be a finite number ≥ 0; got {margin!r}.")
        if self.binning not in BINNING_METHODS:
            raise ValueError(f"binning must be one of {BINNING_METHODS}; got {self.binning!r}.")
        if self.project is not None and not callable(self.project):
            raise ValueError(
                f"project must be None or a function of a batch; got {self.project!r}."
            )
        if self.progress is not None and not callable(self.progress):
            raise ValueError(
                f"progress must be None or callable as progress(done, total); got "
                f"{self.progress!r}."
            )


@dataclasses.dataclass(frozen=True)
class Looks:
    """A sequential plan of draws, the value :func:`rdpjax.audit` takes as ``n=`` for it.

    :func:`rdpjax.rejection.streamed_set_test` takes it as ``n=`` too (the betting test, with
    ``max_n`` alone).

    ``rdpjax.audit(..., n=10**6)`` draws 10⁶ outputs a side once; ``n=Looks(max_n=10**6)``
    draws in looks of growing size up to ``max_n`` and stops at the first look that refutes the
    claim (:mod:`rdpjax.auditing.sequential`; for an (ε, δ) or GDP claim, by betting on sets,
    :mod:`rdpjax.rejection.betting`). Every look's statements hold together at 1 − α, so a true
    claim is refuted with probability ≤ α however early the audit stops.

    Attributes:
      max_n: outputs per database at the last look (a whole number; ``1e6`` is accepted).
        ``None``: the schedule's, or 10⁵ for the betting test.
      schedule: the looks and their levels
        (:func:`rdpjax.auditing.sequential.geometric_schedule`; default from ``max_n`` and α);
        Rényi looks only.
      checkpoint: a folder where the draws so far (binned) and the looks are saved after every
        batch.
      resume: continue the audit saved in ``checkpoint``.
    """

    max_n: int | float | None = None
    schedule: Any = None
    checkpoint: str | Path | None = None
    resume: bool = False

    def __post_init__(self) -> None:
        if self.max_n is not None and (
            isinstance(self.max_n, bool)
            or not isinstance(self.max_n, int | float | np.integer | np.floating)
            or not math.isfinite(float(self.max_n))
            or not float(self.max_n).is_integer()
            or self.max_n < 2
        ):
            raise ValueError(f"max_n must be a whole number ≥ 2; got {self.max_n!r}.")
        if self.resume not in (True, False):
            raise ValueError(f"resume must be True or False; got {self.resume!r}.")
        if self.resume and self.checkpoint is None:
            raise ValueError("resume=True needs the checkpoint folder to resume from.")
        if self.checkpoint is not None and Path(self.checkpoint).is_file():
            # (Else found at the first save, after the first look's draws.)
            raise ValueError(f"checkpoint {self.checkpoint} is a file; give a folder.")


STREAM_FIELDS = tuple(f.name for f in dataclasses.fields(StreamOptions))
BOUND_FIELDS = tuple(f.name for f in dataclasses.fields(BoundOptions))


def split_options(
    options: BoundOptions | None,
    stream: StreamOptions | None,
    fields: Mapping[str, Any],
    *,
    caller: str,
) -> tuple[BoundOptions, StreamOptions]:
    """``(options, stream)`` with the keyword ``fields`` applied to the one that has each name.

    Raises:
      TypeError: on a name that is a field of neither, or an object of the wrong type.
      ValueError: on a bad value (:class:`StreamOptions`' checks).
    """
    unknown = sorted(set(fields) - set(BOUND_FIELDS) - set(STREAM_FIELDS))
    if unknown:
        raise TypeError(
            f"{caller}() got an unexpected keyword argument {unknown[0]!r}; its options are the "
            f"fields of rdpjax.BoundOptions ({', '.join(BOUND_FIELDS)}) and of "
            f"rdpjax.stream.StreamOptions ({', '.join(STREAM_FIELDS)})."
        )
    bound = resolve_options(
        options, {k: v for k, v in fields.items() if k in BOUND_FIELDS}, caller=caller
    )
    stream = or_default(stream, StreamOptions, "stream", "rdpjax.stream.StreamOptions")
    changes = {k: v for k, v in fields.items() if k in STREAM_FIELDS}
    return bound, dataclasses.replace(stream, **changes) if changes else stream
