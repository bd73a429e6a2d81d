"""Learned projections: a 1-D score fitted on training draws, frozen, then certified.

Vector outputs (noisy gradients, histograms, model parameters) need a map to one number before
the 1-D estimator bounds them; the right map depends on where the leak is, which a black-box
auditor does not know. As DP-Sniper and canary audits of DP-SGD do, rdpjax learns it: draw a
training part, fit score families that separate the two output laws, choose one on held-out
training draws, freeze it, and bound the scores of fresh draws. The map is fixed before the
certifying draws exist, so the bound is valid by data processing whatever was learned
(``rdpjax.audit(..., project="learn")``, ``rdpjax audit … --project learn``).

* :mod:`~rdpjax.auditing.learn.scores` — the families (mean difference, shrunk Fisher discriminant,
  logistic and quadratic logistic regression with optax, and the Gaussian log-likelihood ratio,
  a quadratic form with cross terms) and :func:`fit_score`;
* :mod:`~rdpjax.auditing.learn.selection` — :func:`learn_projection`: fit, choose on held-out draws,
  refit, freeze;
  :func:`training_size`: how much to train on.
"""

from rdpjax.auditing.learn.scores import FAMILIES, Score, fit_score
from rdpjax.auditing.learn.selection import (
    LearnedProjection,
    learn_projection,
    train_projection,
    training_size,
)

__all__ = [
    "FAMILIES",
    "LearnedProjection",
    "Score",
    "fit_score",
    "learn_projection",
    "train_projection",
    "training_size",
]
