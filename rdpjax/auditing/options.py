"""How an audit runs: one frozen options object, and the keyword router of :func:`rdpjax.audit`.

:class:`AuditOptions` gathers what :func:`rdpjax.audit` needs beyond *what* it checks (the
mechanism, the pair, the orders, n, the key, the claim, α and the directions): the projection
of the outputs, how the draws are made and kept (the memory budget that decides between memory
and the stream, progress, the densities for the report), the estimator's
:class:`rdpjax.BoundOptions`, the stream's :class:`rdpjax.stream.StreamOptions` and the sets'
:class:`rdpjax.rejection.SetOptions`. :func:`audit_options` lets :func:`rdpjax.audit` take the
object or any of these fields by name. How many draws is a value of its own: ``n=`` a whole
number (fixed n) or a :class:`Looks` (a sequential audit).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from rdpjax._validation import check_flag, check_int
from rdpjax.estimator.options import BoundOptions, or_default
from rdpjax.rejection.options import SetOptions
from rdpjax.stream.options import (
    BOUND_FIELDS,
    STREAM_FIELDS,
    Looks,
    StreamOptions,
    split_options,
)

__all__ = ["DEFAULT_MEMORY_BUDGET", "AuditOptions", "Looks", "Training", "audit_options"]

DEFAULT_MEMORY_BUDGET = 2**29
"""Bytes the in-memory draws may take (512 MiB) before :func:`rdpjax.audit` streams them instead.
The draws are costed at 24 bytes per output coordinate and side: the float64 sample and about two
working copies (``lower_bound`` at n = 4·10⁶ per side added 2.5 × 8 bytes per output to the peak
resident memory; at 1.6·10⁷, 1.7 ×)."""


@dataclasses.dataclass(frozen=True)
class Training:
    """How much of an audit's n outputs a side ``project="learn"`` trains its score on.

    Attributes:
      fraction: the first training part's share of n. Measured at d = 100, n = 10⁵ a side in
        total (``benchmarks/calibration/learned_projection.py --split``, R = 20): learned / oracle
        projection bound 0.918, 0.954, 0.962, 0.951 for shares 0.1, 0.2, 0.3, 0.5.
      fraction_max: the share :func:`rdpjax.auditing.learn.training_size` may grow the
        training part to where the direction it found is still noisy (high dimension).
      max_outputs: at most this many training outputs a side (drawn and fitted in memory);
        beyond 5·10⁵ outputs a side the training part is this, not a fifth.
    """

    fraction: float = 0.2
    fraction_max: float = 0.6
    max_outputs: int = 10**5

    def __post_init__(self) -> None:
        for name in ("fraction", "fraction_max"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0 <= value < 1:
                raise ValueError(f"{name} must be a number in [0, 1); got {value!r}.")
        check_int(self.max_outputs, "max_outputs", 20)


REMOVED_FIELDS = ("sequential", "max_n", "schedule", "checkpoint", "resume")
"""The flags a sequential audit took before it was a value: now :class:`Looks`."""

TESTS = ("auto", "renyi", "both")
"""The values of :attr:`AuditOptions.test`."""


@dataclasses.dataclass(frozen=True)
class AuditOptions:
    """How :func:`rdpjax.audit` draws, bounds and reports.

    Attributes:
      project: a fixed function applied to the outputs (arrays in, array out) before bounding;
        it must be a JAX function when a JAX sampler is streamed. ``"learn"``: learn one
        (:mod:`rdpjax.auditing.learn`) on a training part of the n outputs a side, freeze it
        and certify on the rest, with ``transform="quantile"`` unless given; in a sequential
        audit, on a training batch of ``max(500, 50·d)`` outputs a side drawn first.
      memory_budget: bytes the draws may take in memory (24 bytes per output coordinate and
        side); beyond it they are binned as they are drawn (:mod:`rdpjax.stream`).
      progress: ``None``: a progress bar on stderr once drawing has run 2 s; ``True``: always;
        ``False``: never.
      densities: also keep the densities behind the bound (``AuditReport.densities``): one more
        pass over the draws; only for draws in memory with 1-D or discrete outputs.
      test: which statistics check the claim. ``"renyi"``: Rényi bounds only. ``"both"``:
        Rényi bounds and certified rejection sets (:mod:`rdpjax.rejection`) on the same draws,
        each at α/2, so that everything reported holds together at 1 − α. ``"auto"``:
        ``"both"`` for ε-DP, (ε, δ) and μ-GDP claims (an (ε, δ) claim implies no finite ε(λ),
        a GDP claim's trade-off curve is stronger than its RDP curve, and the pooled guesses
        refute flat-ratio and categorical ε-DP leaks the Rényi bounds miss: docs/rejection.md;
        an ε-DP claim on real vector outputs without ``project`` keeps the Rényi bounds alone,
        as the sets need one number an output; integer rows in memory are coded jointly),
        ``"renyi"`` otherwise. A sequential audit runs one statistic: betting on sets
        (:mod:`rdpjax.rejection.betting`, the whole α) for (ε, δ) and GDP claims, else the
        Rényi looks.
      sets: the :class:`rdpjax.rejection.SetOptions` of the rejection-set test.
      training: with ``project="learn"``, how much to train on (:class:`Training`).
      bound: the estimator's :class:`rdpjax.BoundOptions`.
      stream: the :class:`rdpjax.stream.StreamOptions` of streamed draws; its ``batch_size`` is
        also the batch of a numpy black box drawn in memory (its ``project`` and ``progress``
        are the audit's own, above).
    """

    project: Callable[[Any], Any] | str | None = None
    memory_budget: int = DEFAULT_MEMORY_BUDGET
    progress: bool | None = None
    densities: bool = False
    test: str = "auto"
    sets: SetOptions = SetOptions()
    training: Training = Training()
    bound: BoundOptions = BoundOptions()
    stream: StreamOptions = StreamOptions()

    def __post_init__(self) -> None:
        if self.progress not in (None, True, False):
            raise ValueError(f"progress must be None, True or False; got {self.progress!r}.")
        check_flag(self.densities, "densities")
        check_int(self.memory_budget, "memory_budget", 0)
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {TESTS}; got {self.test!r}.")
        if not isinstance(self.sets, SetOptions):
            raise ValueError(f"sets must be a rdpjax.rejection.SetOptions; got {self.sets!r}.")
        if self.stream.project is not None or self.stream.progress is not None:
            raise ValueError(
                "an audit sets the stream's project and progress itself: pass project= and "
                "progress= to the audit."
            )


AUDIT_FIELDS = tuple(
    f.name for f in dataclasses.fields(AuditOptions) if f.name not in ("bound", "stream")
)
_STREAM_ONLY = tuple(name for name in STREAM_FIELDS if name not in AUDIT_FIELDS)
SET_FIELDS = tuple(
    f.name for f in dataclasses.fields(SetOptions) if f.name not in ("both_directions",)
)
"""The :class:`rdpjax.rejection.SetOptions` fields :func:`rdpjax.audit` takes by name (its own
``both_directions`` is the Rényi bounds' and applies to the sets through ``sets=``)."""


def audit_options(options: AuditOptions | None, fields: Mapping[str, Any]) -> AuditOptions:
    """``options`` (default ``AuditOptions()``) with the keyword ``fields`` applied by name.

    A name of :class:`AuditOptions` sets that field; one of :class:`rdpjax.BoundOptions` a
    field of its ``bound``; one of :class:`rdpjax.stream.StreamOptions` (other than
    ``project`` and ``progress``) a field of its ``stream``; one of :data:`SET_FIELDS`
    (``tpr_at_fpr=0.01``) a field of its ``sets``.

    Raises:
      TypeError: on any other name, or an ``options`` of another type.
      ValueError: on a bad value.
    """
    removed = sorted(set(fields) & set(REMOVED_FIELDS))
    if removed:
        raise TypeError(
            f"audit() takes no {removed[0]}=: a sequential audit is n=rdpjax.Looks(max_n=…, "
            "schedule=…, checkpoint=…, resume=…) (rdpjax.auditing.Looks)."
        )
    known = {*AUDIT_FIELDS, *BOUND_FIELDS, *_STREAM_ONLY, *SET_FIELDS}
    unknown = sorted(set(fields) - known)
    if "claimed_epsilon" in unknown:
        raise TypeError(
            "audit() takes no claimed_epsilon=; pass claim=rdpjax.claims.pure_dp(ε) instead."
        )
    if unknown:
        raise TypeError(
            f"audit() got an unexpected keyword argument {unknown[0]!r}; its options are the "
            f"fields of rdpjax.auditing.AuditOptions ({', '.join(AUDIT_FIELDS)}), of "
            f"rdpjax.BoundOptions ({', '.join(BOUND_FIELDS)}), of rdpjax.stream.StreamOptions "
            f"({', '.join(_STREAM_ONLY)}) and of rdpjax.rejection.SetOptions "
            f"({', '.join(SET_FIELDS)})."
        )
    options = or_default(options, AuditOptions, "options", "rdpjax.auditing.AuditOptions")
    own = {k: v for k, v in fields.items() if k in AUDIT_FIELDS}
    sets = {k: v for k, v in fields.items() if k in SET_FIELDS}
    rest = {k: v for k, v in fields.items() if k not in AUDIT_FIELDS and k not in SET_FIELDS}
    if sets:
        own["sets"] = dataclasses.replace(own.get("sets", options.sets), **sets)
    if rest:  # the estimator's and the stream's fields, routed as the stream's drivers do
        own["bound"], own["stream"] = split_options(
            options.bound, options.stream, rest, caller="audit"
        )
    return dataclasses.replace(options, **own) if own else options
