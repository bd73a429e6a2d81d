"""The driver behind paper 001's four estimators (:mod:`rdpjax.histogram.algorithms`).

Checks of the counts, the sizes a theorem asks for against the caller's, one compiled kernel
that draws, counts and estimates at every input (:mod:`rdpjax.histogram.counting`,
:mod:`rdpjax.histogram.estimate`), and paper 000's lower bound on the first chunk of the same
draws; the global estimators' equally spaced inputs (Algorithm 2 of arXiv:2208.14414).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.estimator.api import lower_bound
from rdpjax.histogram.counting import draw_counts
from rdpjax.histogram.estimate import HistogramEstimate, from_counts_traced
from rdpjax.histogram.sample_size import check_real, input_interval

_MAX_N = 2**62  # largest n the estimators draw (int64 counts)


def _check_count(name: str, value, minimum: int = 1) -> int:
    return check_int(value, name, minimum, _MAX_N)


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
    return from_counts_traced(
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
        if value is not None and not (check_real(name, value) > 0):
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
                discrete=mechanism.output(inputs[0]).is_discrete,
            )  # Eq. (16) of arXiv:2212.04739v3
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


def _global(
    mechanism, key, theory, *, lam, input_low, input_high, inputs, buckets, n, **kw
) -> HistogramEstimate:
    c, d = input_interval(input_low, input_high)
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
