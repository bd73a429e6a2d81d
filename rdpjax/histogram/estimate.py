"""Paper 001's estimates from bucket counts, and the result type of every histogram estimator.

Step 7 of Algorithm 1 of Gorla, Jalouzot, Granese, Palamidessi, Piantanida, arXiv:2208.14414
(docs/methods.md §4): ``ε̃ = max_j |log(N_j/M_j)|``, the maximum over pairs of inputs for
Algorithm 2, and ``1/(λ−1) log Σ_j (N_j/n)^λ (M_j/n)^(1−λ)`` for the Rényi variant; an empty
bucket fails the algorithm (step 6). Beside it, the same histograms with paper 000's softmax floor
(eq. (13) of arXiv:2212.04739v3) on the denominator bucket probabilities.

:func:`from_counts` is jittable and vmaps over replications; :func:`from_counts_traced` is its
unjitted body, called inside the estimators' own compiled kernel. Cost O(rows · k) for ε-LDP and
O(rows² · k) for the global Rényi estimate.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._pytree import pytree_dataclass
from rdpjax.estimator.api import DEFAULTS
from rdpjax.estimator.bound_plan import Bound
from rdpjax.estimator.divergence import plugin_divergence, renyi_divergence, softmax_floor
from rdpjax.estimator.settings import discrete_settings

STATUS_OK = 0
STATUS_EMPTY_BUCKET = 1  # Algorithm 1 fails: some count N_j or M_j is zero (§4 step 6).
STATUS_OUTSIDE = 2  # an output fell outside [low, high]: the setting's assumption is violated.
_STATUS_TEXT = ("ok", "failed: empty bucket", "failed: output outside [low, high]")


@pytree_dataclass(static=("buckets", "guaranteed"))
class HistogramEstimate:
    """Result of the histogram estimators. A pytree: arrays are leaves, sizes are static.

    Attributes:
      estimate: the paper-001 estimate: ``max |log(N_ij/N_i'j)|`` over buckets j and the input
        pairs (ε-LDP), or ``max D_λ`` of the bucket frequencies (Rényi-LDP). ``+inf`` when the
        algorithm fails (``status != 0``); never NaN.
      floored: the same histograms with paper 000's softmax floor on the denominator bucket
        probabilities; finite even with empty buckets, and at most the unfloored value of the
        same pair when no bucket is empty (``q_τ ≥ q``).
      status: ``STATUS_OK`` (0), ``STATUS_EMPTY_BUCKET`` (1: Algorithm 1 fails) or
        ``STATUS_OUTSIDE`` (2: an output fell outside ``[low, high]``).
      failed_input: index (into ``inputs``) of the first input with an empty bucket, else −1.
      failed_bucket: the first empty bucket of that input, else −1.
      pair: ``(2,)`` indices ``(i, i')`` into ``inputs`` of the pair attaining the estimate
        (numerator first); for ε-LDP the input with the larger count in the maximizing bucket.
      outside: ``(rows,)`` outputs outside ``[low, high]`` per input.
      counts: ``(rows, buckets)`` bucket counts; row i is input ``inputs[i]``.
      inputs: ``(rows,)`` the inputs (``(x1, x2)`` or the grid), or their indices.
      lam: the Rényi order λ, ``inf`` for ε-LDP.
      floor, beta: τ and β of the softmax floor (bucket-probability units).
      precision, confidence: the targets γ, β the sizes were computed for (``None`` if unset).
      lower: paper 000's :class:`rdpjax.Bound` on the same draws (see the estimators), or None.
      n: outputs drawn per input (a Python int from the estimators, a leaf under ``jit``).
      buckets: k (static).
      guaranteed: whether (buckets, n) meet the theorem's conditions for (γ, β, L).
    """

    estimate: Any
    floored: Any
    status: Any
    failed_input: Any
    failed_bucket: Any
    pair: Any
    outside: Any
    counts: Any
    inputs: Any
    lam: Any
    floor: Any
    beta: Any
    precision: Any = None
    confidence: Any = None
    lower: Bound | None = None
    n: Any = 0
    buckets: int = 0
    guaranteed: bool = False

    @property
    def failed(self):
        """True where the algorithm failed (an empty bucket or an output out of range)."""
        return np.asarray(self.status) != STATUS_OK

    @property
    def status_text(self) -> str:
        """The status in words, naming the empty bucket."""
        status = int(np.asarray(self.status))
        text = _STATUS_TEXT[status]
        if status == STATUS_EMPTY_BUCKET:
            i, j = int(np.asarray(self.failed_input)), int(np.asarray(self.failed_bucket))
            text += f" {j} of input {i} (x = {np.asarray(self.inputs)[i].tolist()})"
        return text

    @property
    def lower_epsilon(self) -> float | None:
        """Paper 000's lower bound on the level (max over its orders and directions), or None.

        A lower bound on ``D_λ`` for any λ is one on ε* too (``D_λ ≤ D_∞ ≤ ε*``).
        """
        if self.lower is None:
            return None
        return float(np.max(np.asarray(self.lower.lower)))


def _default_floor(n):
    """Paper 000's discrete floor rule (:func:`rdpjax.estimator.settings.discrete_settings`).

    The floor is a probability: τ = max(0.03 n^(−0.4), 4/n).
    """
    return discrete_settings(jnp.asarray(n, jnp.float64), None, None, DEFAULTS)[0]


def from_counts_traced(
    counts,
    n,
    *,
    lam=None,
    floor=None,
    beta=None,
    outside=None,
    inputs=None,
    directed: bool = True,
) -> HistogramEstimate:
    """The body of :func:`from_counts` (traced; ``n`` may be a tracer)."""
    counts = jnp.asarray(counts)
    rows, k = counts.shape
    if rows < 2:
        raise ValueError(f"counts must have at least 2 rows (inputs); got shape {counts.shape}")
    floor = jnp.asarray(_default_floor(n) if floor is None else floor, jnp.float64)
    beta = 1.0 / floor if beta is None else jnp.asarray(beta, jnp.float64)
    outside = jnp.zeros(rows, jnp.int64) if outside is None else jnp.asarray(outside)
    inputs = jnp.arange(rows) if inputs is None else jnp.asarray(inputs)

    empty = counts == 0
    first = jnp.argmax(empty.ravel())
    any_empty = empty.any()
    status = jnp.where(
        outside.sum() > 0, STATUS_OUTSIDE, jnp.where(any_empty, STATUS_EMPTY_BUCKET, STATUS_OK)
    )
    freq = counts / n  # N_j / n
    log_freq = jnp.where(counts > 0, jnp.log(jnp.maximum(freq, 1e-300)), -jnp.inf)
    log_floored = jnp.log(softmax_floor(freq, floor, beta))  # Eq. (13) of arXiv:2212.04739v3, > 0

    if lam is None:
        # Algorithm 1 (§4 step 7) / Algorithm 2: max over buckets and pairs of |log N_ij/N_i'j|.
        safe = jnp.log(jnp.maximum(counts, 1).astype(jnp.float64))
        spread = safe.max(0) - safe.min(0)
        j = jnp.argmax(spread)
        raw = spread[j]
        pair = jnp.stack([jnp.argmax(counts[:, j]), jnp.argmin(counts[:, j])])
        # Floored: max over j of max_i log p̂_ij − min_i' log (p̂_i'j)_τ (diagonal terms ≤ 0).
        floored = jnp.max(log_freq.max(0) - log_floored.min(0))
        lam_out = jnp.asarray(jnp.inf, jnp.float64)
    else:
        lam_out = jnp.asarray(lam, jnp.float64)
        if directed and rows == 2:
            raw = renyi_divergence(freq[0], freq[1], lam_out)  # Rényi variant, estimator
            floored = plugin_divergence(freq[0], freq[1], lam_out, floor, beta)
            pair = jnp.array([0, 1])
        else:
            idx = jnp.arange(rows)
            off = idx[:, None] != idx[None, :]

            def matrix(fn):
                m = jax.vmap(lambda a: jax.vmap(lambda b: fn(a, b))(freq))(freq)
                return jnp.where(off, m, -jnp.inf)

            # Zero denominators give wrong finite values here, but any zero fails the run.
            raw_m = matrix(lambda a, b: renyi_divergence(a, jnp.maximum(b, 1e-300), lam_out))
            flo_m = matrix(lambda a, b: plugin_divergence(a, b, lam_out, floor, beta))
            best = jnp.argmax(raw_m)
            raw, floored = raw_m.ravel()[best], flo_m.max()
            pair = jnp.stack([best // rows, best % rows])
    estimate = jnp.where(status == STATUS_OK, raw, jnp.inf)
    return HistogramEstimate(
        estimate=estimate,
        floored=floored,
        status=status.astype(jnp.int32),
        failed_input=jnp.where(any_empty, first // k, -1).astype(jnp.int32),
        failed_bucket=jnp.where(any_empty, first % k, -1).astype(jnp.int32),
        pair=pair.astype(jnp.int32),
        outside=outside,
        counts=counts,
        inputs=inputs,
        lam=lam_out,
        floor=floor,
        beta=beta,
        n=n,
        buckets=k,
    )


_from_counts_jit = jax.jit(from_counts_traced, static_argnames=("directed",))


def from_counts(
    counts,
    n,
    *,
    lam=None,
    floor=None,
    beta=None,
    outside=None,
    inputs=None,
    directed: bool = True,
) -> HistogramEstimate:
    """Both histogram estimates from bucket counts (jittable; vmap it over replications).

    Args:
      counts: ``(rows, k)`` integer counts, row i from n outputs at input i (rows ≥ 2).
      n: number of outputs per input (may be traced).
      lam: ``None`` for ε-LDP, or the Rényi order λ > 1.
      floor: τ of the softmax floor on bucket probabilities; default ``max(0.03 n^(−0.4), 4/n)``.
      beta: β of the softmax floor; default ``1/τ``.
      outside: ``(rows,)`` outputs outside ``[low, high]``; default none.
      inputs: ``(rows,)`` labels of the rows; default ``0 … rows−1``.
      directed: Rényi only: with two rows and ``True``, only ``D_λ(row 0 ‖ row 1)``; else the
        maximum over all ordered pairs (the global estimate).

    Returns:
      A :class:`HistogramEstimate` with ``lower=None``, ``precision=confidence=None``.
    """
    return _from_counts_jit(
        counts, n, lam=lam, floor=floor, beta=beta, outside=outside, inputs=inputs,
        directed=directed,
    )  # fmt: skip
