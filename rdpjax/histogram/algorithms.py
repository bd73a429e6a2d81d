"""Paper 001's algorithms end to end: sizes, draws, counts and estimates for a mechanism.

Gorla, Jalouzot, Granese, Palamidessi, Piantanida, arXiv:2208.14414 (docs/methods.md §4):

* :func:`estimate_ldp`: Algorithm 1, ``ε*(x1, x2)`` (Theorem 2);
* :func:`estimate_lrdp`: its Rényi variant, ``D_λ(P(·|x1) ‖ P(·|x2))``;
* :func:`estimate_global_ldp`: Algorithm 2, ``sup_{x1,x2 ∈ [c,d]} ε*(x1, x2)`` (Theorem 3);
* :func:`estimate_global_lrdp`: the Rényi analogue of Algorithm 2.

Each resolves the sizes (:mod:`rdpjax.histogram.sample_size`, or the caller's ``buckets=``/``n=``,
then ``guaranteed`` says whether they meet the theorem), draws and counts at every input in one
compiled kernel (:mod:`rdpjax.histogram.counting`, vmapped in batches over the inputs), estimates
from the counts (:mod:`rdpjax.histogram.estimate`) and adds paper 000's lower bound
(:func:`rdpjax.lower_bound`) on the first chunk of the same draws. Costs: O(n) sampling and
counting per input, memory O(chunk_size) per input, O(k_x² · buckets) for the global estimate.
"""

from __future__ import annotations

from collections.abc import Sequence

from rdpjax.histogram._driver import _global, _pair_inputs, _resolve_sizes, _run
from rdpjax.histogram.counting import CHUNK
from rdpjax.histogram.estimate import HistogramEstimate
from rdpjax.histogram.sample_size import (
    check_common,
    check_lam,
    check_lipschitz,
    global_ldp_sample_size,
    global_lrdp_sample_size,
    ldp_buckets,
    ldp_condition,
    ldp_sample_size,
    lrdp_condition,
    lrdp_constants,
    lrdp_sample_size,
)


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
    chunk_size: int = CHUNK,
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
      x1: the first input.
      x2: the second input.
      key: a PRNG key; input i draws from ``jax.random.split(key, 2)[i]``.
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, Lipschitz constant of both output densities on ``[low, high]``.
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.
      n: outputs per input; default the guaranteed size. A larger n keeps the guarantee.
      buckets: number of buckets; default the guaranteed k. Needs ``n``; without the
        precondition ``L < 2/(b−a)²`` this is the only way to run (no guarantee).
      floor: τ of the softmax floor on bucket probabilities (default
        ``τ = max(0.03 n^(−0.4), 4/n)``, paper 000's discrete rule).
      beta: β of the softmax floor (default ``β = 1/τ``).
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
      >>> import math, jax, rdpjax
      >>> mech = rdpjax.mechanisms.TruncatedLaplace(scale=2.0)      # ε* = 0.5
      >>> r = estimate_ldp(mech, 0.0, 1.0, key=jax.random.key(0), precision=1.0,
      ...                  confidence=0.8, lipschitz=1 / (4 * (1 - math.exp(-0.5))),
      ...                  with_lower_bound=False)
      >>> (r.buckets, r.n, int(r.status), abs(float(r.estimate) - 0.5) <= 1.0)
      (6, 9588, 0, True)
    """
    gamma, beta_c, low, high = check_common(precision, confidence, low, high)
    width = high - low

    def condition_for(k):
        tau, _ = ldp_buckets(gamma, check_lipschitz(lipschitz, width), width)
        return ldp_condition(k, width / k * tau, gamma, beta_c)

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
    chunk_size: int = CHUNK,
) -> HistogramEstimate:
    """Rényi variant of Algorithm 1 (arXiv:2208.14414): estimate ``D_λ(P(·|x1) ‖ P(·|x2))``.

    Returns ``1/(λ−1) log Σ_j (N_j/n)^λ (M_j/n)^(1−λ)``; any empty bucket fails the algorithm
    (status, estimate ``+inf``). With the default sizes the estimate is within γ of the true
    ``D_λ`` with probability ≥ β. Also reports the floored histogram (paper 000's plug-in on the
    buckets) and paper 000's lower bound on the same ``D_λ`` (same direction).

    Args:
      mechanism: a JAX-pytree mechanism with scalar outputs in ``[low, high]`` (as in
        :func:`estimate_ldp`, like every argument but ``lam``).
      x1: the first input.
      x2: the second input.
      key: a PRNG key; input i draws from ``jax.random.split(key, 2)[i]``.
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, Lipschitz constant of both output densities on ``[low, high]``.
      lam: the Rényi order λ > 1 (also the order of paper 000's bound).
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.
      n: outputs per input; default the guaranteed size (as in :func:`estimate_ldp`).
      buckets: number of buckets; default the guaranteed k. Needs ``n``.
      floor: τ of the softmax floor on bucket probabilities (default as in :func:`estimate_ldp`).
      beta: β of the softmax floor (default ``1/τ``).
      with_lower_bound: also compute paper 000's bound on the first ``min(n, chunk_size)`` draws.
      alpha: level of that bound.
      chunk_size: outputs drawn and counted per step (memory).

    Returns:
      A :class:`HistogramEstimate` (numpy leaves).

    Raises:
      ValueError: on invalid arguments (λ ≤ 1 included) or when the precondition fails
        without ``buckets``.
    """
    gamma, beta_c, low, high = check_common(precision, confidence, low, high)
    lam = check_lam(lam)
    width = high - low

    def condition_for(k):
        tau0, gamma_p, _ = lrdp_constants(gamma, check_lipschitz(lipschitz, width), lam, width)
        return lrdp_condition(k, width / k * tau0, gamma_p, beta_c)

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
    chunk_size: int = CHUNK,
) -> HistogramEstimate:
    """Algorithm 2 of arXiv:2208.14414: estimate ``sup_{x1,x2 ∈ [c,d]} ε*(x1, x2)``.

    Draws n outputs at each of ``inputs`` equally spaced points of ``[c, d]`` (input i from
    ``jax.random.split(key, inputs)[i]``; drawing is vmapped over the grid in batches), and
    returns the maximum over all pairs of grid inputs and buckets of ``|log(N^(i)_j/N^(i')_j)|``
    — the maximum of the pairwise Algorithm 1 estimates on the same draws. Default sizes from
    :func:`global_ldp_sample_size` (Theorem 3). Paper 000's bound is computed for the end points
    ``(c, d)``, a pair fixed before seeing the data (so it stays valid), on the same draws.

    Args:
      mechanism: a JAX-pytree mechanism with scalar outputs in ``[low, high]`` (as in
        :func:`estimate_ldp`).
      key: a PRNG key; input i draws from ``jax.random.split(key, inputs)[i]``.
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, Lipschitz constant of the output densities on ``[low, high]``.
      input_lipschitz: L' of ``x ↦ P(y|x)``.
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.
      input_low: c, the lower end of the input interval ``[c, d]``.
      input_high: d, its upper end.
      inputs: number of grid inputs (≥ 2); default the guaranteed k_x.
      n: outputs per input; default the guaranteed size (as in :func:`estimate_ldp`).
      buckets: number of buckets; default the guaranteed k.
      floor: τ of the softmax floor on bucket probabilities (default as in :func:`estimate_ldp`).
      beta: β of the softmax floor (default ``1/τ``).
      with_lower_bound: also compute paper 000's bound for the end points ``(c, d)`` (same draws).
      bound_lam: orders of paper 000's bound.
      alpha: level of that bound (simultaneous over its orders and directions).
      chunk_size: outputs drawn and counted per step (memory).

    Returns:
      A :class:`HistogramEstimate`; ``inputs`` holds the grid, ``pair`` the maximizing pair.
    """
    gamma, beta_c, low, high = check_common(precision, confidence, low, high)
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
    chunk_size: int = CHUNK,
) -> HistogramEstimate:
    """Global Rényi-LDP: ``max`` over ordered pairs of grid inputs of the Rényi histogram estimate.

    The Rényi analogue of Algorithm 2 (sizes: :func:`global_lrdp_sample_size`, whose split of
    γ and β is **[unverified]**). Paper 000's bound: ``D_λ`` between the end points, both
    directions.

    Args:
      mechanism: a JAX-pytree mechanism with scalar outputs in ``[low, high]`` (as in
        :func:`estimate_global_ldp`, like every argument but ``lam``).
      key: a PRNG key; input i draws from ``jax.random.split(key, inputs)[i]``.
      precision: γ > 0.
      confidence: β in (0, 1).
      lipschitz: L, Lipschitz constant of the output densities on ``[low, high]``.
      input_lipschitz: L' of ``x ↦ P(y|x)``.
      lam: the Rényi order λ > 1 (also the order of paper 000's bound).
      low: a, the lower end of the output interval ``[a, b]``.
      high: b, its upper end.
      input_low: c, the lower end of the input interval ``[c, d]``.
      input_high: d, its upper end.
      inputs: number of grid inputs (≥ 2); default the guaranteed k_x.
      n: outputs per input; default the guaranteed size (as in :func:`estimate_ldp`).
      buckets: number of buckets; default the guaranteed k.
      floor: τ of the softmax floor on bucket probabilities (default as in :func:`estimate_ldp`).
      beta: β of the softmax floor (default ``1/τ``).
      with_lower_bound: also compute paper 000's bound for the end points ``(c, d)`` (same draws).
      alpha: level of that bound (simultaneous over its directions).
      chunk_size: outputs drawn and counted per step (memory).

    Returns:
      A :class:`HistogramEstimate`.
    """
    gamma, beta_c, low, high = check_common(precision, confidence, low, high)
    lam = check_lam(lam)
    return _global(
        mechanism, key,
        lambda: global_lrdp_sample_size(
            gamma, beta_c, lipschitz, input_lipschitz, lam, low, high, input_low, input_high
        ),
        lam=lam, input_low=input_low, input_high=input_high, inputs=inputs, buckets=buckets,
        n=n, low=low, high=high, floor=floor, beta=beta, precision=gamma, confidence=beta_c,
        with_lower_bound=with_lower_bound, bound_lam=lam, alpha=alpha, chunk_size=chunk_size,
    )  # fmt: skip
