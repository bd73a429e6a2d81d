"""Choose a score on held-out training draws, then freeze it (``project="learn"``).

The training draws are split in two halves: every family of :data:`rdpjax.learn.FAMILIES` is
fitted on the first, and each fitted score is judged on the second by the lower bound it gives
there (λ = 2, both directions, :func:`rdpjax.lower_bound`) — the quantity the certification
will report. The best family is refitted on all training draws and frozen. Nothing here sees the
certifying draws, which :func:`rdpjax.audit` draws afterwards from an independent key, so the
certified bound is valid whatever was chosen (data processing, :mod:`rdpjax.learn.scores`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rdpjax._json import json_floats
from rdpjax._precision import float64
from rdpjax.estimator.api import lower_bound
from rdpjax.learn.scores import FAMILIES, Score, fit_score

__all__ = [
    "TRAIN_FRACTION",
    "TRAIN_MAX",
    "LearnedProjection",
    "learn_projection",
    "train_projection",
]

TRAIN_MAX = 10**5
"""At most this many training outputs a side (they are drawn and fitted in memory); beyond
5·10⁵ outputs a side the training part is this, not a fifth."""

TRAIN_FRACTION = 0.2
"""Share of an audit's n outputs per side drawn to train the score (the rest certify it).

Measured at d = 100, n = 10⁵ a side in total (``benchmarks/learned_projection.py --split``, R = 20):
learned / oracle-projection bound 0.918, 0.954, 0.962, 0.951 for shares 0.1, 0.2, 0.3, 0.5."""


@dataclasses.dataclass(frozen=True)
class LearnedProjection:
    """A frozen score and how it was chosen.

    Attributes:
      score: the :class:`~rdpjax.learn.scores.Score` applied to the certifying draws.
      family: its family.
      criteria: held-out lower bound on D_2 (both directions) of every family tried.
      n_train: training outputs per side.
    """

    score: Score
    family: str
    criteria: dict
    n_train: int

    def __call__(self, x):
        """The frozen score of outputs ``x``: ``self.score(x)``."""
        return self.score(x)

    def to_dict(self) -> dict:
        """A JSON-ready dict: the family, the criteria (non-finite as ``None``) and ``n_train``."""
        return {
            "family": self.family,
            # A family that separated nothing scored −inf: None in JSON, as elsewhere.
            "criteria": dict(
                zip(self.criteria, json_floats(list(self.criteria.values())), strict=True)
            ),
            "n_train": self.n_train,
        }


def learn_projection(p, q, *, families=FAMILIES) -> LearnedProjection:
    """Fit every family on half the training draws, keep the best on the other half, refit it.

    Args:
      p: ``(m, d)`` training outputs on x (m ≥ 20).
      q: ``(m, d)`` training outputs on x' (m ≥ 20).
      families: the families to try (default all of :data:`rdpjax.learn.FAMILIES`).

    Returns:
      A :class:`LearnedProjection`.

    Raises:
      ValueError: for fewer than 20 training outputs a side, outputs that are not finite
        numbers, or an unknown family.
    """
    p = np.asarray(p, np.float64).reshape(len(p), -1)
    q = np.asarray(q, np.float64).reshape(len(q), -1)
    if min(len(p), len(q)) < 20:
        raise ValueError(f"a learned projection needs ≥ 20 training outputs a side; got {len(p)}.")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
        raise ValueError("the training outputs must be finite numbers.")
    families = tuple(families)
    for family in families:
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}; got {family!r}.")
    half_p, half_q = len(p) // 2, len(q) // 2
    criteria = {}
    with float64():
        for family in families:
            score = fit_score(family, p[:half_p], q[:half_q])
            s_p, s_q = score(p[half_p:]), score(q[half_q:])
            if np.ptp(s_p) == 0 or np.ptp(s_q) == 0:
                criteria[family] = -np.inf  # a constant score separates nothing
                continue
            held_out = lower_bound(s_p, s_q, 2.0, both_directions=True, discrete=False)
            criteria[family] = float(held_out.lower[0])
        best = max(criteria, key=criteria.get)
        score = fit_score(best, p, q)
    return LearnedProjection(score=score, family=best, criteria=criteria, n_train=len(p))


def train_projection(project, mechanism, key, x, x_prime, n: int, batch_size: int):
    """:func:`rdpjax.audit`'s ``project="learn"``: draw a training part, learn and freeze a score.

    The training part of ``n`` outputs a side (``rdpjax.learn.TRAIN_FRACTION``, at most
    ``rdpjax.learn.TRAIN_MAX``, read at each call, so that setting them on the package takes
    effect) is drawn from a key folded off ``key`` (so no draw is shared with the
    certification); the score is learned and frozen by :func:`learn_projection`.

    Returns:
      ``(projection, n_certify)``: the frozen score and the outputs per side left to certify.
    """
    import jax

    from rdpjax import learn  # the package's TRAIN_MAX, TRAIN_FRACTION: settable, read per call
    from rdpjax.auditing import draw_outputs
    from rdpjax.mechanisms.base import Mechanism

    if project != "learn":
        raise ValueError(f"project must be a function or 'learn'; got {project!r}.")
    n_train = min(learn.TRAIN_MAX, max(20, round(learn.TRAIN_FRACTION * n)))
    if n - n_train < 80:
        raise ValueError(f"project='learn' needs n ≥ 100 outputs per database; got {n}.")
    kp, kq = jax.random.split(jax.random.fold_in(key, 0x1EA2))  # not a key the bound uses
    if isinstance(mechanism, Mechanism):
        p, q = mechanism.sample(kp, x, n_train), mechanism.sample(kq, x_prime, n_train)
    else:
        p = draw_outputs(mechanism, kp, x, n_train, batch_size=batch_size)
        q = draw_outputs(mechanism, kq, x_prime, n_train, batch_size=batch_size)
    return learn_projection(np.asarray(p), np.asarray(q)), n - n_train
