"""Auditing: from a mechanism and a claim to a verdict and a report.

The layer above the estimator, the samplers and the claims:

* :mod:`~rdpjax.auditing.dispatch` — :func:`audit`: draw on two adjacent databases (in memory or
  streamed), bound ε(λ), compare with the exact value and the claim;
* :mod:`~rdpjax.auditing.draws` — numpy black boxes drawn batch by batch; a zoo mechanism's
  exact values;
* :mod:`~rdpjax.auditing.report` — :class:`AuditReport`, its text, markdown and JSON;
* :mod:`~rdpjax.auditing.densities` — the densities behind a bound, on its grid;
* :mod:`~rdpjax.auditing.plots` — the figures (matplotlib, imported when drawing);
* :mod:`~rdpjax.auditing.writer` — :func:`write_report`: a report's files;
* :mod:`~rdpjax.auditing.learn` — learned projections of vector outputs (``project="learn"``);
* :mod:`~rdpjax.auditing.sequential` — audits that stop at the first refuting look.

``learn`` and ``sequential`` are loaded on first use (they need optax and :mod:`rdpjax.stream`).
"""

from rdpjax.auditing.dispatch import DEFAULT_MEMORY_BUDGET, audit
from rdpjax.auditing.draws import draw_outputs, exact_divergences
from rdpjax.auditing.options import AuditOptions, Looks, Training
from rdpjax.auditing.report import AuditReport, Look
from rdpjax.auditing.writer import write_report

__all__ = [
    "DEFAULT_MEMORY_BUDGET",
    "AuditOptions",
    "Looks",
    "AuditReport",
    "Look",
    "Training",
    "audit",
    "draw_outputs",
    "exact_divergences",
    "write_report",
]
