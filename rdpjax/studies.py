"""Coverage studies: many replications of an audit in one compiled, vmapped call.

A lower bound is valid when it lands at or below the truth with probability ≥ 1 − α. For a zoo
mechanism (pure JAX sampler, exact divergence known) this is measured directly: draw R
independent replications of both samples, bound each, and count how often ``lower ≤ exact``.
The replications run inside ``jax.lax.map`` over keys (vmapped in batches that bound memory),
so the whole study is one compilation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import numpy as np

from rdpjax._precision import float64
from rdpjax._pytree import pytree_dataclass
from rdpjax.audit import exact_divergences
from rdpjax.bounds import plan_bound
from rdpjax.mechanisms.base import Mechanism

__all__ = ["CoverageResult", "coverage", "wilson_interval"]


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if trials <= 0:
        raise ValueError("trials must be positive")
    phat = successes / trials
    denom = 1 + z * z / trials
    centre = (phat + z * z / (2 * trials)) / denom
    half = z * math.sqrt(phat * (1 - phat) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@pytree_dataclass(static=("reps", "n"))
class CoverageResult:
    """Per-order coverage and tightness of the bound over ``reps`` replications.

    Attributes:
      lam: ``(L,)`` orders.
      exact: ``(L,)`` exact value of the quantity bounded.
      coverage: ``(L,)`` fraction of replications with ``lower ≤ exact`` for that order.
      coverage_low, coverage_high: ``(L,)`` Wilson 95% interval of the coverage.
      simultaneous: fraction of replications where every order's bound held at once.
      tightness: ``(L,)`` mean of ``lower / exact``.
      lower: ``(reps, L)`` every replication's bounds.
      estimate, std_error: ``(reps, L)``.
      reps, n: replications and outputs per database.
    """

    lam: np.ndarray
    exact: np.ndarray
    coverage: np.ndarray
    coverage_low: np.ndarray
    coverage_high: np.ndarray
    simultaneous: float
    tightness: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    reps: int
    n: int


def coverage(
    mechanism: Mechanism,
    x,
    x_prime,
    lam: float | Sequence[float],
    *,
    n: int,
    reps: int,
    key,
    alpha: float = 0.05,
    both_directions: bool = False,
    batch_size: int | None = None,
    **estimator_options,
) -> CoverageResult:
    """Empirical coverage of :func:`rdpjax.lower_bound` on a zoo mechanism with a known truth.

    Args:
      mechanism: a zoo mechanism whose ``divergence`` is known for ``(x, x_prime)``.
      x, x_prime: adjacent databases.
      lam: orders; the bounds of one replication are simultaneous (Bonferroni) as in
        :func:`rdpjax.lower_bound`.
      n: outputs per database per replication.
      reps: number of replications (R).
      key: PRNG key.
      alpha: family-wise level.
      both_directions: bound both directions; the truth is then the larger divergence.
      batch_size: replications vmapped together (default: about 4e7 / n).
      **estimator_options: passed to :func:`rdpjax.plan_bound`.

    Raises:
      ValueError: if the mechanism has no exact divergence for the pair, or reps < 1.
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError("coverage needs a rdpjax.mechanisms mechanism (a pure JAX sampler).")
    if not isinstance(reps, int) or reps < 1:
        raise ValueError(f"reps must be a positive int; got {reps!r}.")
    orders = [float(v) for v in np.atleast_1d(np.asarray(lam, np.float64))]
    exact = exact_divergences(mechanism, x, x_prime, orders, both_directions)
    if exact is None:
        raise ValueError(f"{mechanism.name} has no exact divergence for this pair at {orders}.")
    out_x, out_xp = mechanism.output(x), mechanism.output(x_prime)
    discrete = out_x.is_discrete

    def draw(k):
        kp, kq = jax.random.split(k)
        p, q = mechanism.sample(kp, x, n), mechanism.sample(kq, x_prime, n)
        if discrete:
            p, q = out_x.encode(p), out_xp.encode(q)
        return p, q

    batch = batch_size or max(1, min(reps, int(4e7 // n)))
    with float64():
        pilot_p, pilot_q = draw(jax.random.fold_in(key, 2**31 - 1))
        support = out_x.alphabet_size if discrete else None
        plan, _, _ = plan_bound(
            pilot_p,
            pilot_q,
            orders,
            alpha=alpha,
            both_directions=both_directions,
            discrete=discrete,
            support_size=support,
            **estimator_options,
        )

        @jax.jit
        def study(keys):
            def one(k):
                b = plan(*draw(k))
                return b.estimate, b.std_error, b.lower

            return jax.lax.map(one, keys, batch_size=batch)

        est, se, lower = (np.asarray(a) for a in study(jax.random.split(key, reps)))
    held = lower <= exact
    cov = held.mean(axis=0)
    intervals = [wilson_interval(int(k), reps) for k in held.sum(axis=0)]
    return CoverageResult(
        lam=np.asarray(orders),
        exact=exact,
        coverage=cov,
        coverage_low=np.array([lo for lo, _ in intervals]),
        coverage_high=np.array([hi for _, hi in intervals]),
        simultaneous=float(np.all(held, axis=1).mean()),
        tightness=(lower / exact).mean(axis=0),
        lower=lower,
        estimate=est,
        std_error=se,
        reps=reps,
        n=n,
    )
