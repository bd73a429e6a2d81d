"""Histogram estimators of ε-LDP and Rényi-LDP with guaranteed sample sizes (paper 001).

Gorla, Jalouzot, Granese, Palamidessi, Piantanida, *On the (Im)Possibility of Estimating Various
Notions of Differential Privacy*, arXiv:2208.14414, read through docs/methods.md §4 (the extracted
text lost its formulas; the authors' code, github.com/LouisJalouzot/DP-Estimation, agrees).
"§4 step k" in this package's docstrings is the k-th step of Algorithm 1 as docs/methods.md §4
lists it, not a line number of the paper's pseudocode (only lines 4–7, sampling, and 8–14,
counting, survive in the text).

Setting: a local mechanism ``P(y | x)`` whose outputs lie in ``[a, b]`` = ``[low, high]`` and
whose output densities are L-Lipschitz with ``L < 2/(b−a)²``. Then every density is at least
``τ = 1/(b−a) − L(b−a)/2 > 0`` and a histogram with enough buckets and samples estimates

* the pairwise LDP level ``ε*(x1, x2) = sup_y |log P(y|x1)/P(y|x2)|`` (Algorithm 1, Theorem 2),
* the Rényi level ``D_λ(P(·|x1) ‖ P(·|x2))`` (the Rényi variant),
* their suprema over an input interval ``[c, d]`` (Algorithm 2, Theorem 3, and its Rényi analogue)

to precision γ with probability ≥ β. Theorem 1 says no estimator can do this without such an
assumption. The guaranteed sizes are very conservative (docs/methods.md §4,
``benchmarks/papers/paper_001.py``).

Next to the histogram estimate every estimator reports, on the same draws,

* the same histograms with paper 000's softmax floor (eq. (13) of arXiv:2212.04739v3) on the
  denominator bucket probabilities — never fails on empty buckets, biased downward;
* paper 000's statistical lower bound :func:`rdpjax.lower_bound` (eq. (16)) on the raw outputs.

Costs: sampling ``O(n)`` per input, counting ``O(n)`` by scatter-add, memory ``O(chunk_size)``
per input (outputs are drawn and counted in chunks, never all held); the global estimate is
``O(k_x² · buckets)`` on top. Sample sizes are exact for ``n < 2^53`` (float64 evaluation of the
condition); above that, the smallest n is resolved to float64 precision.

Modules, in the order of the data flow:

* :mod:`rdpjax.histogram.config`: :class:`Accuracy` (γ, β), :class:`Regularity` (L, L', the
  output and input intervals) and :class:`HistogramSettings` (sizes, floor, paper 000's bound,
  memory), the estimators' options grouped by concept;
* :mod:`rdpjax.histogram.sample_size`: the guaranteed sizes (Theorems 2 and 3, the Rényi variant)
  and the checks of the setting's arguments;
* :mod:`rdpjax.histogram.counting`: binning outputs into buckets, drawing while counting;
* :mod:`rdpjax.histogram.estimate`: the estimates from counts, :class:`HistogramEstimate`;
* :mod:`rdpjax.histogram.algorithms`: Algorithms 1 and 2 and their Rényi analogues end to end.
"""

from rdpjax.histogram.algorithms import (
    estimate_global_ldp,
    estimate_global_lrdp,
    estimate_ldp,
    estimate_lrdp,
)
from rdpjax.histogram.config import Accuracy, HistogramSettings, Regularity
from rdpjax.histogram.counting import bucket_counts, draw_counts
from rdpjax.histogram.estimate import (
    STATUS_EMPTY_BUCKET,
    STATUS_OK,
    STATUS_OUTSIDE,
    HistogramEstimate,
    from_counts,
)
from rdpjax.histogram.sample_size import (
    global_ldp_sample_size,
    global_lrdp_sample_size,
    ldp_sample_size,
    lrdp_sample_size,
)

__all__ = [
    "STATUS_EMPTY_BUCKET",
    "STATUS_OK",
    "STATUS_OUTSIDE",
    "Accuracy",
    "HistogramEstimate",
    "HistogramSettings",
    "Regularity",
    "bucket_counts",
    "draw_counts",
    "estimate_global_ldp",
    "estimate_global_lrdp",
    "estimate_ldp",
    "estimate_lrdp",
    "from_counts",
    "global_ldp_sample_size",
    "global_lrdp_sample_size",
    "ldp_sample_size",
    "lrdp_sample_size",
]
