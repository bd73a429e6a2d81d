"""A panel of output laws on cells with known masses, and the true rates of a cell operating point.

Used by tests/rejection/test_operating.py and benchmarks/calibration/tpr_at_fpr.py. Each law
is a pair (P, Q) of cell probabilities: continuous laws cut at fixed edges (masses from scipy's
CDFs), discrete laws on their atoms.
"""

import numpy as np
from scipy import stats

EDGES = np.linspace(-6.0, 7.0, 131)


def _cut(law_p, law_q):
    """Cell masses of two scipy laws on ``EDGES`` (the two tails are cells too)."""

    def masses(law):
        cdf = np.r_[0.0, law.cdf(EDGES), 1.0]
        return np.diff(cdf)

    return masses(law_p), masses(law_q)


def _laws():
    gauss = _cut(stats.norm(1.0, 1.0), stats.norm(0.0, 1.0))
    laplace = _cut(stats.laplace(1.0, 1.0), stats.laplace(0.0, 1.0))  # flat ratio beyond 1
    cauchy = _cut(stats.cauchy(2.0, 1.0), stats.cauchy(0.0, 1.0))  # heavy tails
    n0, n3 = _cut(stats.norm(0.0, 1.0), stats.norm(3.0, 0.5))
    mixture = (0.9 * n0 + 0.1 * n3, n0)  # a leak on a tenth of the outputs
    sub = (0.5 * gauss[0] + 0.5 * gauss[1], gauss[1])  # the Gaussian, subsampled at ½
    atoms = np.arange(-30, 31)
    geometric = (  # discrete Laplace (two-sided geometric) of scale 1/0.7, shift 1
        np.exp(-0.7 * np.abs(atoms - 1)),
        np.exp(-0.7 * np.abs(atoms)),
    )
    geometric = tuple(g / g.sum() for g in geometric)
    rr = (np.array([0.75, 0.25]), np.array([0.25, 0.75]))  # randomized response, ε = log 3
    return {
        "gauss": gauss,
        "laplace": laplace,
        "cauchy": cauchy,
        "mixture": mixture,
        "subsampled": sub,
        "geometric": geometric,
        "randomized_response": rr,
    }


LAWS = _laws()


def true_rates(point, scores, p, q):
    """The true (FPR, TPR) of the randomized distinguisher behind ``point`` under (P, Q) = (p, q).

    "Positive" on the cells ranked above the cut (by score, equal scores by index), and on the
    cut cell with probability ``share`` (``OperatingPoint.cut``).
    """
    if not point.certified:
        return 0.0, 0.0
    cell, share = point.cut
    order = np.argsort(-np.asarray(scores, np.float64), kind="stable")
    higher = order[: int(np.flatnonzero(order == cell)[0])]
    return (
        float(q[higher].sum() + share * q[cell]),
        float(p[higher].sum() + share * p[cell]),
    )
