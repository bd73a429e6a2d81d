"""Paper 001's algorithms end to end: sizes, draws, counts and estimates for a mechanism.

Gorla, Jalouzot, Granese, Palamidessi, Piantanida, arXiv:2208.14414 (docs/methods.md §4):

* :func:`estimate_ldp`: Algorithm 1, ``ε*(x1, x2)`` (Theorem 2);
* :func:`estimate_lrdp`: its Rényi variant, ``D_λ(P(·|x1) ‖ P(·|x2))``;
* :func:`estimate_global_ldp`: Algorithm 2, ``sup_{x1,x2 ∈ [c,d]} ε*(x1, x2)`` (Theorem 3);
* :func:`estimate_global_lrdp`: the Rényi analogue of Algorithm 2.

Each takes the target :class:`~rdpjax.histogram.Accuracy` (γ, β), the mechanism's
:class:`~rdpjax.histogram.Regularity` (L, ``[a, b]``; L' and ``[c, d]`` for the global ones) and
optional :class:`~rdpjax.histogram.HistogramSettings` (:mod:`rdpjax.histogram.config`), resolves
the sizes (:mod:`rdpjax.histogram.sample_size`, or the settings' ``buckets``/``n``, then
``guaranteed`` says whether they meet the theorem), draws and counts at every input in one
compiled kernel (:mod:`rdpjax.histogram.counting`, vmapped in batches over the inputs), estimates
from the counts (:mod:`rdpjax.histogram.estimate`) and adds paper 000's lower bound
(:func:`rdpjax.lower_bound`) on the first chunk of the same draws. Costs: O(n) sampling and
counting per input, memory O(chunk_size) per input, O(k_x² · buckets) for the global estimate.
"""

from __future__ import annotations

from rdpjax.histogram._driver import _global, _pair_inputs, _resolve_sizes, _run
from rdpjax.histogram.config import Accuracy, HistogramSettings, Regularity
from rdpjax.histogram.estimate import HistogramEstimate
from rdpjax.histogram.sample_size import (
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

_LDP_BOUND_LAM = (2.0, 5.0, 7.0)  # default orders of paper 000's bound for the ε-LDP estimators


def _options(
    estimator: str, accuracy, regularity, settings, *, renyi: bool, global_: bool
) -> HistogramSettings:
    """``settings`` (default ``HistogramSettings()``) after the checks that depend on the estimator.

    The option objects check their own fields when they are made; here: their types, the
    options one estimator does not take, and L' for the global estimators.
    """
    settings = HistogramSettings() if settings is None else settings
    for name, value, kind in (
        ("accuracy", accuracy, Accuracy),
        ("regularity", regularity, Regularity),
        ("settings", settings, HistogramSettings),
    ):
        if not isinstance(value, kind):
            raise ValueError(f"{estimator}: {name} must be a {kind.__name__}; got {value!r}")
    if renyi and settings.bound_lam is not None:
        raise ValueError(
            f"{estimator}: paper 000's bound is computed at the order lam itself; "
            "settings.bound_lam applies to the ε-LDP estimators only"
        )
    if not global_ and settings.inputs is not None:
        raise ValueError(
            f"{estimator} estimates at the two inputs x1, x2; settings.inputs applies to the "
            "global estimators only"
        )
    if global_ and regularity.input_lipschitz is None:
        raise ValueError(
            f"{estimator} needs the Lipschitz constant L' of x ↦ P(y|x) in the input: "
            "pass Regularity(input_lipschitz=...)"
        )
    return settings


def _common(settings: HistogramSettings, lam) -> dict:
    """The keywords of the driver that come straight from the settings."""
    return dict(
        floor=settings.floor,
        beta=settings.beta,
        with_lower_bound=settings.with_lower_bound,
        bound_lam=(settings.bound_lam or _LDP_BOUND_LAM) if lam is None else lam,
        alpha=settings.alpha,
        chunk_size=settings.chunk_size,
    )


def estimate_ldp(
    key,
    mechanism,
    x1,
    x2,
    *,
    accuracy: Accuracy,
    regularity: Regularity,
    settings: HistogramSettings | None = None,
) -> HistogramEstimate:
    """Algorithm 1 of arXiv:2208.14414: estimate ``ε*(x1, x2) = sup_y |log P(y|x1)/P(y|x2)|``.

    Draws n outputs at each input, counts them into k equal buckets (N_j at x1, M_j at x2) and
    returns ``ε̃ = max_j |log(N_j/M_j)|``; any empty bucket fails the algorithm (reported in
    ``status``/``failed_bucket``, estimate ``+inf``). Theorem 2: with the default sizes,
    ``P(success and |ε* − ε̃| ≤ γ) ≥ β``. Also reports the floored histogram and paper 000's
    lower bound on ``D_λ`` for ``settings.bound_lam`` in both directions, each a lower bound on
    ε*.

    Args:
      key: a PRNG key; input i draws from ``jax.random.split(key, 2)[i]``.
      mechanism: a mechanism with ``sample(key, database, n)`` returning scalar outputs in
        ``[low, high]`` (e.g. ``rdpjax.mechanisms.TruncatedLaplace``); must be a JAX pytree.
      x1: the first input.
      x2: the second input.
      accuracy: the target γ and β (:class:`~rdpjax.histogram.Accuracy`).
      regularity: L and the output interval ``[a, b]`` of both output densities
        (:class:`~rdpjax.histogram.Regularity`; its input fields are not used).
      settings: sizes, floor, paper 000's bound and chunk size
        (:class:`~rdpjax.histogram.HistogramSettings`); default ``HistogramSettings()``: the
        guaranteed sizes, the default floor, the bound at orders ``(2, 5, 7)``. ``buckets``
        needs ``n``; ``inputs`` is not taken.

    Returns:
      A :class:`HistogramEstimate` (numpy leaves) with ``lam = inf``.

    Raises:
      ValueError: on invalid arguments or when the precondition fails without ``buckets``.

    Example:
      >>> import math, jax, rdpjax
      >>> from rdpjax.histogram import Accuracy, HistogramSettings, Regularity
      >>> mech = rdpjax.mechanisms.TruncatedLaplace(scale=2.0)      # ε* = 0.5
      >>> r = estimate_ldp(jax.random.key(0), mech, 0.0, 1.0,
      ...                  accuracy=Accuracy(precision=1.0, confidence=0.8),
      ...                  regularity=Regularity(lipschitz=1 / (4 * (1 - math.exp(-0.5)))),
      ...                  settings=HistogramSettings(with_lower_bound=False))
      >>> (r.buckets, r.n, int(r.status), abs(float(r.estimate) - 0.5) <= 1.0)
      (6, 9588, 0, True)
    """
    settings = _options("estimate_ldp", accuracy, regularity, settings, renyi=False, global_=False)
    gamma, beta_c = accuracy.precision, accuracy.confidence
    low, high, lipschitz = regularity.low, regularity.high, regularity.lipschitz
    width = high - low

    def condition_for(k):
        tau, _ = ldp_buckets(gamma, check_lipschitz(lipschitz, width), width)
        return ldp_condition(k, width / k * tau, gamma, beta_c)

    k, n, guaranteed = _resolve_sizes(
        lambda: ldp_sample_size(gamma, beta_c, lipschitz, low, high),
        settings.buckets, settings.n, condition_for,
    )  # fmt: skip
    return _run(
        mechanism, _pair_inputs(x1, x2), key, low=low, high=high, lam=None, buckets=k, n=n,
        guaranteed=guaranteed, directed=True, precision=gamma, confidence=beta_c,
        both_directions=True, **_common(settings, None),
    )  # fmt: skip


def estimate_lrdp(
    key,
    mechanism,
    x1,
    x2,
    *,
    lam: float,
    accuracy: Accuracy,
    regularity: Regularity,
    settings: HistogramSettings | None = None,
) -> HistogramEstimate:
    """Rényi variant of Algorithm 1 (arXiv:2208.14414): estimate ``D_λ(P(·|x1) ‖ P(·|x2))``.

    Returns ``1/(λ−1) log Σ_j (N_j/n)^λ (M_j/n)^(1−λ)``; any empty bucket fails the algorithm
    (status, estimate ``+inf``). With the default sizes the estimate is within γ of the true
    ``D_λ`` with probability ≥ β. Also reports the floored histogram (paper 000's plug-in on the
    buckets) and paper 000's lower bound on the same ``D_λ`` (same direction).

    Args:
      key: a PRNG key; input i draws from ``jax.random.split(key, 2)[i]``.
      mechanism: a JAX-pytree mechanism with scalar outputs in ``[low, high]`` (as in
        :func:`estimate_ldp`, like every argument but ``lam``).
      x1: the first input.
      x2: the second input.
      lam: the Rényi order λ > 1 (also the order of paper 000's bound).
      accuracy: the target γ and β (:class:`~rdpjax.histogram.Accuracy`).
      regularity: L and ``[a, b]`` (:class:`~rdpjax.histogram.Regularity`).
      settings: as in :func:`estimate_ldp` but without ``bound_lam`` (the bound is at λ).

    Returns:
      A :class:`HistogramEstimate` (numpy leaves).

    Raises:
      ValueError: on invalid arguments (λ ≤ 1 included) or when the precondition fails
        without ``buckets``.
    """
    settings = _options("estimate_lrdp", accuracy, regularity, settings, renyi=True, global_=False)
    gamma, beta_c = accuracy.precision, accuracy.confidence
    low, high, lipschitz = regularity.low, regularity.high, regularity.lipschitz
    lam = check_lam(lam)
    width = high - low

    def condition_for(k):
        tau0, gamma_p, _ = lrdp_constants(gamma, check_lipschitz(lipschitz, width), lam, width)
        return lrdp_condition(k, width / k * tau0, gamma_p, beta_c)

    k, n, guaranteed = _resolve_sizes(
        lambda: lrdp_sample_size(gamma, beta_c, lipschitz, lam, low, high),
        settings.buckets, settings.n, condition_for,
    )  # fmt: skip
    return _run(
        mechanism, _pair_inputs(x1, x2), key, low=low, high=high, lam=lam, buckets=k, n=n,
        guaranteed=guaranteed, directed=True, precision=gamma, confidence=beta_c,
        both_directions=False, **_common(settings, lam),
    )  # fmt: skip


def estimate_global_ldp(
    key,
    mechanism,
    *,
    accuracy: Accuracy,
    regularity: Regularity,
    settings: HistogramSettings | None = None,
) -> HistogramEstimate:
    """Algorithm 2 of arXiv:2208.14414: estimate ``sup_{x1,x2 ∈ [c,d]} ε*(x1, x2)``.

    Draws n outputs at each of ``settings.inputs`` equally spaced points of ``[c, d]`` (input i
    from ``jax.random.split(key, inputs)[i]``; drawing is vmapped over the grid in batches), and
    returns the maximum over all pairs of grid inputs and buckets of ``|log(N^(i)_j/N^(i')_j)|``
    — the maximum of the pairwise Algorithm 1 estimates on the same draws. Default sizes from
    :func:`global_ldp_sample_size` (Theorem 3). Paper 000's bound is computed for the end points
    ``(c, d)``, a pair fixed before seeing the data (so it stays valid), on the same draws.

    Args:
      key: a PRNG key; input i draws from ``jax.random.split(key, inputs)[i]``.
      mechanism: a JAX-pytree mechanism with scalar outputs in ``[low, high]`` (as in
        :func:`estimate_ldp`).
      accuracy: the target γ and β (:class:`~rdpjax.histogram.Accuracy`).
      regularity: L, ``[a, b]``, L' (``input_lipschitz``, required) and the input interval
        ``[c, d]`` (:class:`~rdpjax.histogram.Regularity`).
      settings: sizes (``inputs``: grid inputs ≥ 2, default the guaranteed k_x; ``n``,
        ``buckets``: default the guaranteed sizes), floor, paper 000's bound for the end points
        ``(c, d)`` and chunk size (:class:`~rdpjax.histogram.HistogramSettings`).

    Returns:
      A :class:`HistogramEstimate`; ``inputs`` holds the grid, ``pair`` the maximizing pair.
    """
    settings = _options(
        "estimate_global_ldp", accuracy, regularity, settings, renyi=False, global_=True
    )
    gamma, beta_c, r = accuracy.precision, accuracy.confidence, regularity
    return _global(
        mechanism, key,
        lambda: global_ldp_sample_size(
            gamma, beta_c, r.lipschitz, r.input_lipschitz, r.low, r.high, r.input_low,
            r.input_high,
        ),
        lam=None, input_low=r.input_low, input_high=r.input_high, inputs=settings.inputs,
        buckets=settings.buckets, n=settings.n, low=r.low, high=r.high, precision=gamma,
        confidence=beta_c, **_common(settings, None),
    )  # fmt: skip


def estimate_global_lrdp(
    key,
    mechanism,
    *,
    lam: float,
    accuracy: Accuracy,
    regularity: Regularity,
    settings: HistogramSettings | None = None,
) -> HistogramEstimate:
    """Global Rényi-LDP: ``max`` over ordered pairs of grid inputs of the Rényi histogram estimate.

    The Rényi analogue of Algorithm 2 (sizes: :func:`global_lrdp_sample_size`, whose split of
    γ and β is **[unverified]**). Paper 000's bound: ``D_λ`` between the end points, both
    directions.

    Args:
      key: a PRNG key; input i draws from ``jax.random.split(key, inputs)[i]``.
      mechanism: a JAX-pytree mechanism with scalar outputs in ``[low, high]`` (as in
        :func:`estimate_global_ldp`, like every argument but ``lam``).
      lam: the Rényi order λ > 1 (also the order of paper 000's bound).
      accuracy: the target γ and β (:class:`~rdpjax.histogram.Accuracy`).
      regularity: L, ``[a, b]``, L' (required) and ``[c, d]``
        (:class:`~rdpjax.histogram.Regularity`).
      settings: as in :func:`estimate_global_ldp` but without ``bound_lam`` (the bound is at λ,
        simultaneous over its two directions).

    Returns:
      A :class:`HistogramEstimate`.
    """
    settings = _options(
        "estimate_global_lrdp", accuracy, regularity, settings, renyi=True, global_=True
    )
    gamma, beta_c, r = accuracy.precision, accuracy.confidence, regularity
    lam = check_lam(lam)
    return _global(
        mechanism, key,
        lambda: global_lrdp_sample_size(
            gamma, beta_c, r.lipschitz, r.input_lipschitz, lam, r.low, r.high, r.input_low,
            r.input_high,
        ),
        lam=lam, input_low=r.input_low, input_high=r.input_high, inputs=settings.inputs,
        buckets=settings.buckets, n=settings.n, low=r.low, high=r.high, precision=gamma,
        confidence=beta_c, **_common(settings, lam),
    )  # fmt: skip
