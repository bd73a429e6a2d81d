"""Bucket counts of paper 001's histograms: the binning of outputs, and drawing while counting.

Lines 4–7 (sampling) and 8–14 (counting) of Algorithm 1 of Gorla, Jalouzot, Granese, Palamidessi,
Piantanida, arXiv:2208.14414 (docs/methods.md §4, steps 2 and 5): k equal buckets of
``[low, high]``, the bucket of y is ``⌊(y − low)/w⌋`` and ``y = high`` goes to the last one.
Counting is a scatter-add, O(m) for m outputs; :func:`draw_counts` draws in chunks of
:data:`CHUNK` outputs inside one ``lax.scan``, so memory is O(chunk) whatever n. Both are jittable
and return, beside the counts, the number of outputs outside ``[low, high]``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rdpjax._precision import require_float64

CHUNK = 2**20  # outputs drawn and counted per step (8 MiB of float64 per input)


def bucket_counts(samples, buckets: int, low, high) -> tuple[jax.Array, jax.Array]:
    """Histogram of ``samples`` over ``buckets`` equal buckets of ``[low, high]`` (jittable).

    Bucket of y: ``⌊(y − low)/w⌋`` with ``w = (high − low)/buckets``; ``y = high`` goes to the last
    bucket (Algorithm 1, lines 8–14). Outputs outside ``[low, high]`` are not counted; their
    number is returned instead of being dropped silently.

    Args:
      samples: ``(m,)`` (or ``(m, 1)``) real outputs.
      buckets: the static number of buckets k.
      low: the lower end of the interval.
      high: the upper end of the interval (``high > low``).

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
    key, mechanism, database, n: int, buckets: int, low, high, *, chunk_size: int = CHUNK
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
      low: the lower end of the output interval.
      high: the upper end of the output interval.
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
