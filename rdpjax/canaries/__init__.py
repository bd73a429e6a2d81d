"""One-run canary audits: ε, δ and μ lower bounds from a single training run.

m canaries are included in the training set independently with probability ½, the mechanism
runs once, and each canary is scored from the output. :func:`one_run` (in and out scores) and
:func:`one_run_bits` (scores and inclusion bits) turn the scores into lower bounds valid at
confidence 1 − α, by the tail bounds of Steinke, Nasr, Jagielski (arXiv:2305.08846v1,
Thm 3.1 and 5.2: :mod:`.steinke`) and Mahloujifar, Melis, Chaudhuri (arXiv:2410.22235: the
f-DP bound, :mod:`.fdp`, for any trade-off curve), with two-sided guesses over a fixed grid and a
Bonferroni correction (:mod:`.guesses`). A claim of any kind can be checked (:mod:`.tradeoffs`).
The metrics attack papers report, TPR at a target FPR and AUROC with exact or
distribution-free intervals, are in :mod:`.metrics`.

Layout: :mod:`.guesses` (inputs, guess grid, counts) → :mod:`.steinke` and :mod:`.fdp` (tests
and their searches, :mod:`._search`) → :mod:`.api` (the bounds put together, validity argued in
its docstring) → :mod:`.result` (:class:`OneRunResult`). ``docs/canaries.md`` has the model,
the power against jax_privacy and what one run cannot show.
"""

from rdpjax.canaries.api import DEFAULT_DELTA, one_run, one_run_bits
from rdpjax.canaries.guesses import DEFAULT_FRACTIONS, guess_grid
from rdpjax.canaries.metrics import Auroc, OperatingPoint, auroc, tpr_at_fpr
from rdpjax.canaries.result import OneRunResult
from rdpjax.canaries.tradeoffs import claim_curve

__all__ = [
    "Auroc",
    "DEFAULT_DELTA",
    "DEFAULT_FRACTIONS",
    "OneRunResult",
    "OperatingPoint",
    "auroc",
    "claim_curve",
    "guess_grid",
    "one_run",
    "one_run_bits",
    "tpr_at_fpr",
]
