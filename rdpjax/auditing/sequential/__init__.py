"""Sequential audits: stop as soon as a claim is refuted, valid under optional stopping.

:func:`rdpjax.audit` with ``n=rdpjax.Looks(max_n=N)`` (``rdpjax audit … --until-refuted --max-n N``)
draws in growing batches, bounds ε(λ) at every look of a :class:`Schedule` fixed in advance at a
level spent from α, and stops at the first look whose bound exceeds the claim. Because the looks'
levels sum to at most α, a true claim is refuted with probability ≤ α however many looks are taken
(:mod:`rdpjax.auditing.sequential.schedule`); every setting of a look is fixed before the draws
(:mod:`rdpjax.auditing.sequential.setup`); a checkpoint keeps every draw an interrupted audit made,
and a resumed audit reports what an uninterrupted one would have
(:mod:`rdpjax.auditing.sequential.state`).

Modules: :mod:`~rdpjax.auditing.sequential.schedule` (looks, α-spending),
:mod:`~rdpjax.auditing.sequential.sources` (JAX samplers and numpy black boxes, batch by batch),
:mod:`~rdpjax.auditing.sequential.setup` (the settings of every look, fixed before the draws),
:mod:`~rdpjax.auditing.sequential.engine` (incremental counts, the bound of a look),
:mod:`~rdpjax.auditing.sequential.state` (checkpoints),
:mod:`~rdpjax.auditing.sequential.audit` (the audit on the looks driver,
:mod:`rdpjax.stream.looks`, and the report).
"""

from rdpjax.auditing.sequential.audit import OPTIONS, sequential_audit
from rdpjax.auditing.sequential.schedule import (
    DEFAULT_FIRST,
    DEFAULT_RATIO,
    DEFAULT_SPENDING,
    SPENDING,
    Schedule,
    geometric_schedule,
    spend,
)
from rdpjax.auditing.sequential.state import CHECKPOINT

__all__ = [
    "CHECKPOINT",
    "DEFAULT_FIRST",
    "DEFAULT_RATIO",
    "DEFAULT_SPENDING",
    "OPTIONS",
    "SPENDING",
    "Schedule",
    "geometric_schedule",
    "sequential_audit",
    "spend",
]
