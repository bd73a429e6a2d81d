"""Certified rejection sets: (ε, δ)-DP, ε-DP and μ-GDP claims checked at any sample size.

A claim bounds every test of "x" against "x'": a test rejecting on a set S has type II error at
least ``f(type I error)`` (:mod:`rdpjax.claims.hypothesis`). This package chooses sets S from part
of the draws (likelihood-ratio sets of an estimate, :mod:`.cells`), certifies their masses under
P and Q on the rest with exact Clopper–Pearson bounds (:mod:`.binomial`), simultaneously over
every set tried and both directions (:mod:`.certification`), and reports the certified trade-off
points, a lower bound on ε at a given δ, a lower bound on μ, and whether the claim is refuted
(:mod:`.result`). Validity is finite-sample: it needs only that the certification draws are
i.i.d. and independent of the selection. This is the statistic of Jagielski, Ullman, Oprea,
"Auditing differentially private machine learning", arXiv:2006.07709v1, §3 (Clopper–Pearson on a
distinguisher's error rates), with the distinguisher learned on held-out draws.

Front doors: :func:`set_test` (draws in memory), :func:`streamed_set_test` (from JAX samplers, a
zoo mechanism or a numpy black box, :mod:`rdpjax.stream.draws`: counted as they are drawn, n up
to 2^40 a side, or with ``n=Looks(…)`` anytime-valid, by betting: :mod:`.betting`), and
:func:`rdpjax.audit`, which uses them for (ε, δ) and μ-GDP claims.
"""

from rdpjax.rejection.api import counted_set_test, set_test
from rdpjax.rejection.betting_result import BettingResult
from rdpjax.rejection.binomial import clopper_pearson
from rdpjax.rejection.options import SetOptions
from rdpjax.rejection.result import SetTest
from rdpjax.rejection.streamed import streamed_set_test

__all__ = [
    "BettingResult",
    "SetOptions",
    "SetTest",
    "clopper_pearson",
    "counted_set_test",
    "set_test",
    "streamed_set_test",
]
