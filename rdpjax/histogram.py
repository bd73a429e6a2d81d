"""Histogram estimators of ε-LDP and Rényi-LDP with guaranteed sample sizes (paper 001).

Gorla, Jalouzot, Granese, Palamidessi, Piantanida, *On the (Im)Possibility of Estimating Various
Notions of Differential Privacy*, arXiv:2208.14414, read through docs/methods.md §4 (the extracted
text lost its formulas; the authors' code, github.com/LouisJalouzot/DP-Estimation, agrees).
"§4 step k" below is the k-th step of Algorithm 1 as docs/methods.md §4 lists it, not a line number
of the paper's pseudocode (only lines 4–7, sampling, and 8–14, counting, survive in the text).

Setting: a local mechanism ``P(y | x)`` whose outputs lie in ``[a, b]`` = ``[low, high]`` and
whose output densities are L-Lipschitz with ``L < 2/(b−a)²``. Then every density is at least
``τ = 1/(b−a) − L(b−a)/2 > 0`` and a histogram with enough buckets and samples estimates

* the pairwise LDP level ``ε*(x1, x2) = sup_y |log P(y|x1)/P(y|x2)|`` (Algorithm 1, Theorem 2),
* the Rényi level ``D_λ(P(·|x1) ‖ P(·|x2))`` (the Rényi variant),
* their suprema over an input interval ``[c, d]`` (Algorithm 2, Theorem 3, and its Rényi analogue)

to precision γ with probability ≥ β. Theorem 1 says no estimator can do this without such an
assumption. The guaranteed sizes are very conservative (docs/methods.md §4,
``benchmarks/paper_001.py``).

Next to the histogram estimate every estimator reports, on the same draws,

* the same histograms with paper 000's softmax floor (eq. (13) of arXiv:2212.04739) on the
  denominator bucket probabilities — never fails on empty buckets, biased downward;
* paper 000's statistical lower bound :func:`rdpjax.lower_bound` (eq. (16)) on the raw outputs.

Costs: sampling ``O(n)`` per input, counting ``O(n)`` by scatter-add, memory ``O(chunk_size)``
per input (outputs are drawn and counted in chunks, never all held); the global estimate is
``O(k_x² · buckets)`` on top. Sample sizes are exact for ``n < 2^53`` (float64 evaluation of the
condition); above that, the smallest n is resolved to float64 precision.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64, require_float64
from rdpjax._pytree import pytree_dataclass
from rdpjax._validation import check_int
from rdpjax.estimator.api import DEFAULTS, lower_bound
from rdpjax.estimator.divergence import plugin_divergence, renyi_divergence, softmax_floor
from rdpjax.estimator.plan import Bound
from rdpjax.estimator.settings import discrete_settings

__all__ = [
    "STATUS_EMPTY_BUCKET",
    "STATUS_OK",
    "STATUS_OUTSIDE",
    "HistogramEstimate",
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

STATUS_OK = 0
STATUS_EMPTY_BUCKET = 1  # Algorithm 1 fails: some count N_j or M_j is zero (§4 step 6).
STATUS_OUTSIDE = 2  # an output fell outside [low, high]: the setting's assumption is violated.
_STATUS_TEXT = ("ok", "failed: empty bucket", "failed: output outside [low, high]")
_CHUNK = 2**20  # outputs drawn and counted per step (8 MiB of float64 per input)
_MAX_N = 2**62  # largest n the estimators draw (int64 counts)
_MAX_SEARCH = 2**200  # the guaranteed sizes are Python ints; for λ = 7 they pass 1e24


# ----------------------------------------------------------------------------- validation


def _real(name: str, value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite; got {value!r}")
    return out


def _check_common(precision, confidence, low, high) -> tuple[float, float, float, float]:
    gamma, beta = _real("precision", precision), _real("confidence", confidence)
    low, high = _real("low", low), _real("high", high)
    if gamma <= 0:
        raise ValueError(f"precision (γ) must be > 0; got {precision!r}")
    if not 0 < beta < 1:
        raise ValueError(f"confidence (β) must be in (0, 1); got {confidence!r}")
    if not low < high:
        raise ValueError(f"need low < high (the output interval [a, b]); got {low!r}, {high!r}")
    return gamma, beta, low, high


def _check_lipschitz(lipschitz, width: float, name: str = "lipschitz") -> float:
    lip = _real(name, lipschitz)
    if lip <= 0:
        raise ValueError(f"{name} (L) must be > 0; got {lipschitz!r}")
    if lip >= 2.0 / width**2:
        raise ValueError(
            f"precondition of Theorem 2 fails: {name} L = {lip:.6g} must be < 2/(high−low)² = "
            f"{2.0 / width**2:.6g}; no L-Lipschitz density on [low, high] is then bounded away "
            "from 0, so no sample size is guaranteed (pass buckets= and n= to run the histogram "
            "anyway, without the guarantee)"
        )
    return lip


def _check_lam(lam) -> float:
    value = _real("lam", lam)
    if value <= 1:
        raise ValueError(f"lam (the Rényi order λ) must be a finite number > 1; got {lam!r}")
    return value


def _check_count(name: str, value, minimum: int = 1) -> int:
    return check_int(value, name, minimum, _MAX_N)


# ------------------------------------------------------------------- guaranteed sample sizes


def _psi(n: float, p: float, gamma: float) -> float:
    """ψ(n, p, γ) of Algorithm 1 (docs/methods.md §4, item 3): a Chernoff bound on bucket ratios."""
    e = math.exp(gamma)
    num = math.exp(-n * p * (e - 1) ** 2 / (1 + e)) + math.exp(-n * p * (1 - 1 / e) ** 2 / 2)
    return num / -math.expm1(n * math.log1p(-p))  # 1 − (1 − p)^n


def _smallest_n(ok: Callable[[int], bool]) -> int:
    """Smallest n ≥ 1 with ``ok(n)`` for a monotone ``ok``: doubling, then bisection."""
    hi = 1
    while not ok(hi):
        hi *= 2
        if hi > _MAX_SEARCH:
            raise ValueError("no sample size below 2^200 meets the condition")
    lo = hi // 2  # ok(lo) is False (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _ldp_condition(k: int, p: float, gamma: float, beta: float) -> Callable[[int], bool]:
    """Algorithm 1's condition on n (§4 step 4): ``2k(1 − wτ)^n + 4ψ(n, wτ, γ/12) ≤ 1 − β``."""

    def ok(n: int) -> bool:
        miss = 2 * k * math.exp(n * math.log1p(-p))  # P(some bucket empty), union bound
        return miss + 4 * _psi(n, p, gamma / 12) <= 1 - beta

    return ok


def _ldp_buckets(gamma, lip, width) -> tuple[float, int]:
    tau = 1 / width - lip * width / 2  # Algorithm 1 (§4 step 1): τ ≤ any L-Lipschitz density
    return tau, math.ceil(6 * lip * width / (tau * gamma))  # Algorithm 1 (§4 step 2): k


def ldp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    low: float = 0.0,
    high: float = 1.0,
) -> tuple[int, int]:
    """Buckets and samples per input that Algorithm 1 of arXiv:2208.14414 needs (Theorem 2).

    With ``W = high − low`` and ``τ = 1/W − LW/2``, the number of buckets is
    ``k = ⌈6LW/(τγ)⌉`` and n the smallest integer with
    ``2k(1 − wτ)^n + 4ψ(n, wτ, γ/12) ≤ 1 − β``, ``w = W/k``, found by doubling then bisection
    (the condition is decreasing in n). Then ``P(success and |ε* − ε̃| ≤ γ) ≥ β``.

    Args:
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, a Lipschitz constant of both output densities on ``[low, high]``; the
        precondition of Theorem 2 is ``0 < L < 2/(high − low)²``.
      low, high: the output interval ``[a, b]``.

    Returns:
      ``(buckets, n)``: Python ints; n is the number of outputs drawn at *each* input.

    Raises:
      ValueError: for γ ≤ 0, β ∉ (0, 1), low ≥ high, or when the precondition fails.

    Example:
      >>> ldp_sample_size(1.0, 0.8, 1 / (4 * (1 - math.exp(-0.5))))  # ε = 0.5 (B = 2)
      (6, 9588)
    """
    gamma, beta, low, high = _check_common(precision, confidence, low, high)
    width = high - low
    lip = _check_lipschitz(lipschitz, width)
    tau, k = _ldp_buckets(gamma, lip, width)
    return k, _smallest_n(_ldp_condition(k, width / k * tau, gamma, beta))


def _lrdp_constants(gamma, lip, lam, width) -> tuple[float, float, int]:
    """τ0, γ' and the bucket count k of the Rényi variant (docs/methods.md §4)."""
    tau0 = 1 / width - lip * width / 2  # lower bound on the densities
    tau1 = 1 / width + lip * width / 2  # upper bound on the densities
    big_k = 2 * tau1**lam / tau0 ** (lam - 1)  # K
    small_k = tau0**lam / tau1 ** (lam - 1)  # K'
    gamma_p = min(
        gamma * small_k * (lam - 1) / (2 * big_k * (2 * lam - 1)), math.log(2) / (2 * lam - 1)
    )  # γ'
    k = math.ceil(lip * width * big_k * (2 * lam - 1) / (gamma * tau0 * small_k * (lam - 1)))
    return tau0, gamma_p, k


def _lrdp_condition(k: int, p: float, gamma_p: float, beta: float) -> Callable[[int], bool]:
    """Rényi variant: ``1 − 2k(1 − wτ0)^n − 2kψ(n, wτ0, γ') ≥ β``."""

    def ok(n: int) -> bool:
        return 1 - 2 * k * math.exp(n * math.log1p(-p)) - 2 * k * _psi(n, p, gamma_p) >= beta

    return ok


def lrdp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    lam: float,
    low: float = 0.0,
    high: float = 1.0,
) -> tuple[int, int]:
    """Buckets and samples per input of the Rényi-LDP histogram estimator of arXiv:2208.14414.

    With ``τ0 = 1/W − LW/2``, ``τ1 = 1/W + LW/2``, ``K = 2τ1^λ/τ0^(λ−1)``,
    ``K' = τ0^λ/τ1^(λ−1)`` and ``γ' = min(γK'(λ−1)/(2K(2λ−1)), log 2/(2λ−1))``:
    ``k = ⌈LWK(2λ−1)/(γτ0K'(λ−1))⌉`` buckets and n the smallest integer with
    ``1 − 2k(1 − wτ0)^n − 2kψ(n, wτ0, γ') ≥ β`` (doubling, then bisection).

    Args:
      precision, confidence, lipschitz, low, high: as in :func:`ldp_sample_size`.
      lam: the Rényi order λ > 1.

    Returns:
      ``(buckets, n)`` as Python ints. Both grow fast with λ and L (``K/K' ~ (τ1/τ0)^(2λ−1)``).

    Raises:
      ValueError: as :func:`ldp_sample_size`, and for λ ≤ 1.

    Example:
      >>> lrdp_sample_size(1.0, 0.9, 1 / (25 * (1 - math.exp(-0.2))), 2.0)  # B = 5
      (3, 17794)
    """
    gamma, beta, low, high = _check_common(precision, confidence, low, high)
    lam = _check_lam(lam)
    width = high - low
    lip = _check_lipschitz(lipschitz, width)
    tau0, gamma_p, k = _lrdp_constants(gamma, lip, lam, width)
    return k, _smallest_n(_lrdp_condition(k, width / k * tau0, gamma_p, beta))


def _input_interval(input_low, input_high) -> tuple[float, float]:
    c, d = _real("input_low", input_low), _real("input_high", input_high)
    if not c < d:
        raise ValueError(f"need input_low < input_high; got {input_low!r}, {input_high!r}")
    return c, d


def global_ldp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    input_lipschitz: float,
    low: float = 0.0,
    high: float = 1.0,
    input_low: float = 0.0,
    input_high: float = 1.0,
) -> tuple[int, int, int]:
    """Grid inputs, buckets and samples per input of Algorithm 2 of arXiv:2208.14414.

    ``k_x = ⌈3L'(d − c)/(τγ)⌉`` equally spaced inputs on ``[c, d]`` (at least 2), and the
    Algorithm 1 sizes at precision γ/3 and confidence √β. The split of β is the authors' code's
    (docs/methods.md §4 marks the paper's exact split **[unverified]**).

    Args:
      precision, confidence, lipschitz, low, high: as in :func:`ldp_sample_size`.
      input_lipschitz: L' > 0, a Lipschitz constant of ``x ↦ P(y|x)`` on ``[c, d]``, uniformly
        in y.
      input_low, input_high: the input interval ``[c, d]``.

    Returns:
      ``(inputs, buckets, n)``: Python ints; n outputs are drawn at each of the inputs.

    Raises:
      ValueError: as :func:`ldp_sample_size`, for L' ≤ 0 or ``input_low ≥ input_high``.
    """
    gamma, beta, low, high = _check_common(precision, confidence, low, high)
    c, d = _input_interval(input_low, input_high)
    width = high - low
    tau, _ = _ldp_buckets(gamma, _check_lipschitz(lipschitz, width), width)
    lip_x = _real("input_lipschitz", input_lipschitz)
    if lip_x <= 0:
        raise ValueError(f"input_lipschitz (L') must be > 0; got {input_lipschitz!r}")
    k_x = max(2, math.ceil(3 * lip_x * (d - c) / (tau * gamma)))  # Algorithm 2, line 3
    buckets, n = ldp_sample_size(gamma / 3, math.sqrt(beta), lipschitz, low, high)
    return k_x, buckets, n


def global_lrdp_sample_size(
    precision: float,
    confidence: float,
    lipschitz: float,
    input_lipschitz: float,
    lam: float,
    low: float = 0.0,
    high: float = 1.0,
    input_low: float = 0.0,
    input_high: float = 1.0,
) -> tuple[int, int, int]:
    """Grid inputs, buckets and samples per input of the global Rényi-LDP estimator.

    ``k_x = ⌈3(2λ−1)K L'(d−c)/(2(λ−1)K'τ0γ)⌉`` inputs (docs/methods.md §4) and the Rényi sizes of
    :func:`lrdp_sample_size` at precision γ/3 and confidence √β — the split of Algorithm 2,
    carried over by analogy (**[unverified]**: the paper's text for this case did not survive
    extraction, and the authors' code computes k_x but not a separate inner split).

    Returns:
      ``(inputs, buckets, n)`` as Python ints.

    Raises:
      ValueError: as :func:`global_ldp_sample_size`, and for λ ≤ 1.
    """
    gamma, beta, low, high = _check_common(precision, confidence, low, high)
    lam = _check_lam(lam)
    c, d = _input_interval(input_low, input_high)
    width = high - low
    lip = _check_lipschitz(lipschitz, width)
    lip_x = _real("input_lipschitz", input_lipschitz)
    if lip_x <= 0:
        raise ValueError(f"input_lipschitz (L') must be > 0; got {input_lipschitz!r}")
    tau0, tau1 = 1 / width - lip * width / 2, 1 / width + lip * width / 2
    big_k, small_k = 2 * tau1**lam / tau0 ** (lam - 1), tau0**lam / tau1 ** (lam - 1)
    k_x = max(
        2,
        math.ceil(
            3 * (2 * lam - 1) * big_k * lip_x * (d - c) / (2 * (lam - 1) * small_k * tau0 * gamma)
        ),
    )
    buckets, n = lrdp_sample_size(gamma / 3, math.sqrt(beta), lipschitz, lam, low, high)
    return k_x, buckets, n


# ------------------------------------------------------------------------- counting kernels


def bucket_counts(samples, buckets: int, low, high) -> tuple[jax.Array, jax.Array]:
    """Histogram of ``samples`` over ``buckets`` equal buckets of ``[low, high]`` (jittable).

    Bucket of y: ``⌊(y − low)/w⌋`` with ``w = (high − low)/buckets``; ``y = high`` goes to the last
    bucket (Algorithm 1, lines 8–14). Outputs outside ``[low, high]`` are not counted; their
    number is returned instead of being dropped silently.

    Args:
      samples: ``(m,)`` (or ``(m, 1)``) real outputs.
      buckets: the static number of buckets k.
      low, high: the interval.

    Returns:
      ``(counts, outside)``: int64 ``(buckets,)`` counts and the int64 number outside.
    """
    y = jnp.asarray(samples)
    y = y.reshape(y.shape[0], -1)
    if y.shape[1] != 1:
        raise ValueError(f"histograms need scalar outputs; got samples of shape {samples.shape}")
    y = y[:, 0]
    inside = (y >= low) & (y <= high)
    idx = jnp.floor((y - low) * (buckets / (high - low))).astype(jnp.int64)
    idx = jnp.clip(idx, 0, buckets - 1)
    counts = jnp.zeros(buckets, jnp.int64).at[idx].add(inside.astype(jnp.int64))
    return counts, jnp.sum(~inside, dtype=jnp.int64)


def draw_counts(
    key, mechanism, database, n: int, buckets: int, low, high, *, chunk_size: int = _CHUNK
) -> tuple[jax.Array, jax.Array]:
    """Draw n outputs of ``mechanism`` on ``database`` and count them into buckets (jittable).

    Outputs are drawn in chunks of ``chunk_size`` — chunk i from ``jax.random.fold_in(key, i)``
    — and counted as they come, so memory is ``O(chunk_size)`` whatever n. Chunk 0 is
    ``mechanism.sample(fold_in(key, 0), database, min(n, chunk_size))``.

    Args:
      key: a PRNG key.
      mechanism: any rdpjax mechanism with scalar continuous outputs.
      database: the input x.
      n: static number of outputs.
      buckets: static number of buckets.
      low, high: the output interval.
      chunk_size: static outputs per chunk.

    Returns:
      ``(counts, outside)`` as in :func:`bucket_counts`. Must run inside ``rdpjax.float64()``.
    """
    require_float64("draw_counts")
    size = min(n, chunk_size)
    full, rest = divmod(n, size)

    def block(i, m):
        return bucket_counts(
            mechanism.sample(jax.random.fold_in(key, i), database, m), buckets, low, high
        )

    def step(carry, i):
        counts, outside = block(i, size)
        return (carry[0] + counts, carry[1] + outside), None

    init = (jnp.zeros(buckets, jnp.int64), jnp.zeros((), jnp.int64))
    (counts, outside), _ = jax.lax.scan(step, init, jnp.arange(full))
    if rest:
        more, more_out = block(full, rest)
        counts, outside = counts + more, outside + more_out
    return counts, outside


# ------------------------------------------------------------------------------ estimates


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
    """Paper 000's discrete floor rule (:func:`rdpjax.estimator.settings.discrete_settings`), a
    probability: τ = max(0.03 n^(−0.4), 4/n)."""
    return discrete_settings(jnp.asarray(n, jnp.float64), None, None, DEFAULTS)[0]


def _from_counts(
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
    log_floored = jnp.log(softmax_floor(freq, floor, beta))  # Eq. (13) of 2212.04739, > 0

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


_from_counts_jit = jax.jit(_from_counts, static_argnames=("directed",))


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


@functools.partial(jax.jit, static_argnames=("n", "buckets", "renyi", "directed", "chunk_size"))
def _estimate_kernel(
    keys, mechanism, inputs, low, high, lam, floor, beta, *, n, buckets, renyi, directed, chunk_size
):
    """Draw and count at every input (vmapped in batches over the inputs), then estimate."""
    batch = max(1, min(inputs.shape[0], 2**22 // min(n, chunk_size)))

    def one(args):
        key, x = args
        return draw_counts(key, mechanism, x, n, buckets, low, high, chunk_size=chunk_size)

    counts, outside = jax.lax.map(one, (keys, inputs), batch_size=batch)
    return _from_counts(
        counts,
        n,
        lam=lam if renyi else None,
        floor=floor,
        beta=beta,
        outside=outside,
        inputs=inputs,
        directed=directed,
    )


def _resolve_sizes(theory, buckets, n, condition_for):
    """(buckets, n, guaranteed) from the theory and the user's overrides."""
    if buckets is None:
        k_theory, n_theory = theory()  # raises if the precondition fails
        k = k_theory
        n = n_theory if n is None else _check_count("n", n)
        return k, n, n >= n_theory
    k = _check_count("buckets", buckets)
    if n is None:
        raise ValueError("with buckets= given, pass n= too (the sizes go together)")
    n = _check_count("n", n)
    try:
        k_theory, _ = theory()
    except ValueError:
        return k, n, False  # precondition fails: no guarantee
    return k, n, bool(k >= k_theory and condition_for(k)(n))


def _run(
    mechanism,
    inputs,
    key,
    *,
    low,
    high,
    lam,
    buckets,
    n,
    guaranteed,
    floor,
    beta,
    directed,
    precision,
    confidence,
    with_lower_bound,
    bound_lam,
    both_directions,
    alpha,
    chunk_size,
):
    if not hasattr(mechanism, "sample"):
        raise ValueError(f"mechanism must have sample(key, database, n); got {mechanism!r}")
    for name, value in (("floor", floor), ("beta", beta)):
        if value is not None and not (_real(name, value) > 0):
            raise ValueError(f"{name} must be > 0; got {value!r}")
    chunk_size = _check_count("chunk_size", chunk_size)
    with float64():
        inputs = jnp.asarray(inputs, jnp.float64)
        keys = jax.random.split(key, inputs.shape[0])
        result = _estimate_kernel(
            keys,
            mechanism,
            inputs,
            jnp.float64(low),
            jnp.float64(high),
            jnp.float64(1.0 if lam is None else lam),
            None if floor is None else jnp.float64(floor),
            None if beta is None else jnp.float64(beta),
            n=n,
            buckets=buckets,
            renyi=lam is not None,
            directed=directed,
            chunk_size=chunk_size,
        )
        bound = None
        if with_lower_bound:
            # The same draws: chunk 0 of the first and the last input (at most chunk_size each).
            m = min(n, chunk_size)
            ends = (0, inputs.shape[0] - 1)
            p, q = (mechanism.sample(jax.random.fold_in(keys[i], 0), inputs[i], m) for i in ends)
            bound = lower_bound(
                np.asarray(p),
                np.asarray(q),
                bound_lam,
                alpha=alpha,
                both_directions=both_directions,
            )  # Eq. (16) of arXiv:2212.04739
        result = jax.tree.map(np.asarray, result)
    return dataclasses.replace(
        result,
        precision=precision,
        confidence=confidence,
        lower=bound,
        n=int(n),
        guaranteed=bool(guaranteed),
    )


def _pair_inputs(x1, x2) -> np.ndarray:
    a, b = np.asarray(x1, np.float64), np.asarray(x2, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"x1 and x2 must have the same shape; got {a.shape} and {b.shape}")
    return np.stack([a, b])


def estimate_ldp(
    mechanism,
    x1,
    x2,
    *,
    key,
    precision: float,
    confidence: float,
    lipschitz: float,
    low: float = 0.0,
    high: float = 1.0,
    n: int | None = None,
    buckets: int | None = None,
    floor: float | None = None,
    beta: float | None = None,
    with_lower_bound: bool = True,
    bound_lam: Sequence[float] = (2.0, 5.0, 7.0),
    alpha: float = 0.05,
    chunk_size: int = _CHUNK,
) -> HistogramEstimate:
    """Algorithm 1 of arXiv:2208.14414: estimate ``ε*(x1, x2) = sup_y |log P(y|x1)/P(y|x2)|``.

    Draws n outputs at each input, counts them into k equal buckets (N_j at x1, M_j at x2) and
    returns ``ε̃ = max_j |log(N_j/M_j)|``; any empty bucket fails the algorithm (reported in
    ``status``/``failed_bucket``, estimate ``+inf``). Theorem 2: with the default sizes,
    ``P(success and |ε* − ε̃| ≤ γ) ≥ β``. Also reports the floored histogram and paper 000's
    lower bound on ``D_λ`` for ``bound_lam`` in both directions, each a lower bound on ε*.

    Args:
      mechanism: a mechanism with ``sample(key, database, n)`` returning scalar outputs in
        ``[low, high]`` (e.g. ``rdpjax.mechanisms.TruncatedLaplace``); must be a JAX pytree.
      x1, x2: the two inputs.
      key: a PRNG key; input i draws from ``jax.random.split(key, 2)[i]``.
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, Lipschitz constant of both output densities on ``[low, high]``.
      low, high: the output interval ``[a, b]``.
      n: outputs per input; default the guaranteed size. A larger n keeps the guarantee.
      buckets: number of buckets; default the guaranteed k. Needs ``n``; without the
        precondition ``L < 2/(b−a)²`` this is the only way to run (no guarantee).
      floor, beta: τ and β of the softmax floor on bucket probabilities (default
        ``τ = max(0.03 n^(−0.4), 4/n)``, paper 000's discrete rule, and ``β = 1/τ``).
      with_lower_bound: also compute paper 000's bound (:func:`rdpjax.lower_bound`, KDE) on the
        first ``min(n, chunk_size)`` of the same draws.
      alpha: level of that bound (simultaneous over its orders and directions).
      chunk_size: outputs drawn and counted per step (memory).
      bound_lam: orders of paper 000's bound.

    Returns:
      A :class:`HistogramEstimate` (numpy leaves) with ``lam = inf``.

    Raises:
      ValueError: on invalid arguments or when the precondition fails without ``buckets``.

    Example:
      >>> import jax, rdpjax
      >>> mech = rdpjax.mechanisms.TruncatedLaplace(scale=2.0)      # ε* = 0.5
      >>> r = estimate_ldp(mech, 0.0, 1.0, key=jax.random.key(0), precision=1.0,
      ...                  confidence=0.8, lipschitz=1 / (4 * (1 - math.exp(-0.5))),
      ...                  with_lower_bound=False)
      >>> (r.buckets, r.n, int(r.status), abs(float(r.estimate) - 0.5) <= 1.0)
      (6, 9588, 0, True)
    """
    gamma, beta_c, low, high = _check_common(precision, confidence, low, high)
    width = high - low

    def condition_for(k):
        tau, _ = _ldp_buckets(gamma, _check_lipschitz(lipschitz, width), width)
        return _ldp_condition(k, width / k * tau, gamma, beta_c)

    k, n, guaranteed = _resolve_sizes(
        lambda: ldp_sample_size(gamma, beta_c, lipschitz, low, high), buckets, n, condition_for
    )
    return _run(
        mechanism, _pair_inputs(x1, x2), key, low=low, high=high, lam=None, buckets=k, n=n,
        guaranteed=guaranteed, floor=floor, beta=beta, directed=True, precision=gamma,
        confidence=beta_c, with_lower_bound=with_lower_bound, bound_lam=bound_lam,
        both_directions=True, alpha=alpha, chunk_size=chunk_size,
    )  # fmt: skip


def estimate_lrdp(
    mechanism,
    x1,
    x2,
    *,
    key,
    precision: float,
    confidence: float,
    lipschitz: float,
    lam: float,
    low: float = 0.0,
    high: float = 1.0,
    n: int | None = None,
    buckets: int | None = None,
    floor: float | None = None,
    beta: float | None = None,
    with_lower_bound: bool = True,
    alpha: float = 0.05,
    chunk_size: int = _CHUNK,
) -> HistogramEstimate:
    """Rényi variant of Algorithm 1 (arXiv:2208.14414): estimate ``D_λ(P(·|x1) ‖ P(·|x2))``.

    Returns ``1/(λ−1) log Σ_j (N_j/n)^λ (M_j/n)^(1−λ)``; any empty bucket fails the algorithm
    (status, estimate ``+inf``). With the default sizes the estimate is within γ of the true
    ``D_λ`` with probability ≥ β. Also reports the floored histogram (paper 000's plug-in on the
    buckets) and paper 000's lower bound on the same ``D_λ`` (same direction).

    Args:
      mechanism, x1, x2, key, precision, confidence, lipschitz, low, high, n, buckets, floor,
        beta, with_lower_bound, alpha, chunk_size: as in :func:`estimate_ldp`.
      lam: the Rényi order λ > 1 (also the order of paper 000's bound).

    Returns:
      A :class:`HistogramEstimate` (numpy leaves).

    Raises:
      ValueError: on invalid arguments (λ ≤ 1 included) or when the precondition fails
        without ``buckets``.
    """
    gamma, beta_c, low, high = _check_common(precision, confidence, low, high)
    lam = _check_lam(lam)
    width = high - low

    def condition_for(k):
        tau0, gamma_p, _ = _lrdp_constants(gamma, _check_lipschitz(lipschitz, width), lam, width)
        return _lrdp_condition(k, width / k * tau0, gamma_p, beta_c)

    k, n, guaranteed = _resolve_sizes(
        lambda: lrdp_sample_size(gamma, beta_c, lipschitz, lam, low, high), buckets, n,
        condition_for,
    )  # fmt: skip
    return _run(
        mechanism, _pair_inputs(x1, x2), key, low=low, high=high, lam=lam, buckets=k, n=n,
        guaranteed=guaranteed, floor=floor, beta=beta, directed=True, precision=gamma,
        confidence=beta_c, with_lower_bound=with_lower_bound, bound_lam=lam,
        both_directions=False, alpha=alpha, chunk_size=chunk_size,
    )  # fmt: skip


def _global(
    mechanism, key, theory, *, lam, input_low, input_high, inputs, buckets, n, **kw
) -> HistogramEstimate:
    c, d = _input_interval(input_low, input_high)
    guaranteed = True
    if buckets is None or n is None or inputs is None:
        k_x, k, n_theory = theory()
        if n is not None:
            guaranteed = _check_count("n", n) >= n_theory
        n = n_theory if n is None else n
        buckets = k if buckets is None else buckets
        guaranteed &= buckets == k
        inputs = k_x if inputs is None else inputs
        guaranteed &= inputs >= k_x
    else:
        try:
            k_x, k, n_theory = theory()
            guaranteed = inputs >= k_x and buckets == k and n >= n_theory
        except ValueError:
            guaranteed = False
    inputs = _check_count("inputs", inputs, 2)
    buckets, n = _check_count("buckets", buckets), _check_count("n", n)
    grid = np.linspace(c, d, inputs)  # Algorithm 2: equally spaced inputs, both ends included
    return _run(
        mechanism, grid, key, lam=lam, buckets=buckets, n=n, guaranteed=guaranteed,
        directed=False, both_directions=True, **kw,
    )  # fmt: skip


def estimate_global_ldp(
    mechanism,
    *,
    key,
    precision: float,
    confidence: float,
    lipschitz: float,
    input_lipschitz: float,
    low: float = 0.0,
    high: float = 1.0,
    input_low: float = 0.0,
    input_high: float = 1.0,
    inputs: int | None = None,
    n: int | None = None,
    buckets: int | None = None,
    floor: float | None = None,
    beta: float | None = None,
    with_lower_bound: bool = True,
    bound_lam: Sequence[float] = (2.0, 5.0, 7.0),
    alpha: float = 0.05,
    chunk_size: int = _CHUNK,
) -> HistogramEstimate:
    """Algorithm 2 of arXiv:2208.14414: estimate ``sup_{x1,x2 ∈ [c,d]} ε*(x1, x2)``.

    Draws n outputs at each of ``inputs`` equally spaced points of ``[c, d]`` (input i from
    ``jax.random.split(key, inputs)[i]``; drawing is vmapped over the grid in batches), and
    returns the maximum over all pairs of grid inputs and buckets of ``|log(N^(i)_j/N^(i')_j)|``
    — the maximum of the pairwise Algorithm 1 estimates on the same draws. Default sizes from
    :func:`global_ldp_sample_size` (Theorem 3). Paper 000's bound is computed for the end points
    ``(c, d)``, a pair fixed before seeing the data (so it stays valid), on the same draws.

    Args:
      mechanism, key, precision, confidence, lipschitz, low, high, n, buckets, floor, beta,
        with_lower_bound, bound_lam, alpha, chunk_size: as in :func:`estimate_ldp`.
      input_lipschitz: L' of ``x ↦ P(y|x)``.
      input_low, input_high: the input interval ``[c, d]``.
      inputs: number of grid inputs (≥ 2); default the guaranteed k_x.

    Returns:
      A :class:`HistogramEstimate`; ``inputs`` holds the grid, ``pair`` the maximizing pair.
    """
    gamma, beta_c, low, high = _check_common(precision, confidence, low, high)
    return _global(
        mechanism, key,
        lambda: global_ldp_sample_size(
            gamma, beta_c, lipschitz, input_lipschitz, low, high, input_low, input_high
        ),
        lam=None, input_low=input_low, input_high=input_high, inputs=inputs, buckets=buckets,
        n=n, low=low, high=high, floor=floor, beta=beta, precision=gamma, confidence=beta_c,
        with_lower_bound=with_lower_bound, bound_lam=bound_lam, alpha=alpha,
        chunk_size=chunk_size,
    )  # fmt: skip


def estimate_global_lrdp(
    mechanism,
    *,
    key,
    precision: float,
    confidence: float,
    lipschitz: float,
    input_lipschitz: float,
    lam: float,
    low: float = 0.0,
    high: float = 1.0,
    input_low: float = 0.0,
    input_high: float = 1.0,
    inputs: int | None = None,
    n: int | None = None,
    buckets: int | None = None,
    floor: float | None = None,
    beta: float | None = None,
    with_lower_bound: bool = True,
    alpha: float = 0.05,
    chunk_size: int = _CHUNK,
) -> HistogramEstimate:
    """Global Rényi-LDP: ``max`` over ordered pairs of grid inputs of the Rényi histogram estimate.

    The Rényi analogue of Algorithm 2 (sizes: :func:`global_lrdp_sample_size`, whose split of
    γ and β is **[unverified]**). Paper 000's bound: ``D_λ`` between the end points, both
    directions.

    Args:
      as :func:`estimate_global_ldp`, and ``lam``, the order λ > 1.

    Returns:
      A :class:`HistogramEstimate`.
    """
    gamma, beta_c, low, high = _check_common(precision, confidence, low, high)
    lam = _check_lam(lam)
    return _global(
        mechanism, key,
        lambda: global_lrdp_sample_size(
            gamma, beta_c, lipschitz, input_lipschitz, lam, low, high, input_low, input_high
        ),
        lam=lam, input_low=input_low, input_high=input_high, inputs=inputs, buckets=buckets,
        n=n, low=low, high=high, floor=floor, beta=beta, precision=gamma, confidence=beta_c,
        with_lower_bound=with_lower_bound, bound_lam=lam, alpha=alpha, chunk_size=chunk_size,
    )  # fmt: skip
