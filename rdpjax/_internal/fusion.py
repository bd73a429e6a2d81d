"""A fusion boundary: samples drawn in a program written to memory once before they are binned.

XLA's CPU backend fuses every elementwise consumer of an array with the elementwise ops that made
it, duplicating those ops rather than writing the array out when they count as cheap. A
``jax.random.normal`` sampler's tail (the inverse-erf polynomial: multiplies, adds and selects)
is cheap in that sense, so the binning's scatter operands (indices, packed updates) each
recomputed it. ``lax.optimization_barrier`` does not stop that (XLA's CPU pipeline removes
barriers before fusing); a conditional does: its result is a buffer. Inside the stream's scan on
the 2-core CPU, binning beyond the draws took, with the chunk written out first against fused
with the draws, 0.14–0.7 against 1.4–2.0 ns a sample in 1-D, 3.4–3.8 against 7.5–7.9 in 2-D and
8.2–9.6 against 18.7–23 in 3-D, with the same counts (three runs of
``python benchmarks/performance/binning_layouts.py``).

The conditional's predicate must not be batched. Under ``jax.vmap`` a conditional on a batched
predicate becomes a ``select`` of both branches, which XLA fuses like any elementwise op: no
boundary. So :func:`materialized` without an index carries its own batching rule
(``jax.custom_batching.custom_vmap``): a vmapped call writes the whole batch out behind one
conditional whose predicate is read from the batch's first value. Used so in
:meth:`rdpjax.estimator.bound_plan.BoundPlan.bin`, R = 1000 bounds at 10^5 a side drawn in the same
program (two CPU devices, batches of one) took 0.98–1.01 against 1.13–1.15 s, 2.05–2.09 against
2.36–2.41 times their draws alone, with identical bounds (three runs, in one process each;
``python benchmarks/performance/replication_parts.py`` times both). On samples given in memory (the
coverage study's bounds, 10^4 and 10^5 a side) it changed nothing. The first attempt predicated
each replication on its own values: batched, hence a select, and slower (1.43 against 1.29 s).
Writing the 1-D positions out as well, before the binning's scatter, saved 2% there but cost 20%
when binning 10^7 samples held in memory (10.8 against 8.9 ms), so the binning does not.

The stream's scan (:mod:`rdpjax.stream.scan`) passes its loop counter as the predicate instead:
the streamed audit at 10^7 a side took 1.51 against 1.79 times the RNG alone (in one process,
interleaved).

Accelerators (GPU, TPU) get ``x`` untouched: there a recomputation is cheap next to a round trip
through memory, and a conditional's predicate may cost a host synchronization.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import custom_batching, lax

from rdpjax._typing import Array

__all__ = ["materialized"]


def _boundary(x: Array, predicate: Array) -> Array:
    """``x`` behind ``cond(predicate, x, zeros)`` on the CPU; ``x`` itself elsewhere."""

    def on_cpu(x: Array, predicate: Array) -> Array:
        return lax.cond(predicate, lambda: x, lambda: jnp.zeros_like(x))

    return lax.platform_dependent(x, predicate, cpu=on_cpu, default=lambda x, predicate: x)


@jax.custom_jvp
@custom_batching.custom_vmap
def _by_value(x: Array) -> Array:
    """The boundary predicated on ``x``'s first value ``a``: ``isnan(a) or a = a``.

    That holds for every float, but the compiler cannot know it.
    """
    first = x.reshape(-1)[0]
    return _boundary(x, jnp.isnan(first) | (first == first))


@_by_value.fun.def_vmap
def _by_value_batched(axis_size: int, in_batched: list[bool], xs: Array):
    """A batch behind one conditional, predicated on the batch's first value (not batched)."""
    del axis_size
    return _by_value(xs), in_batched[0]


@_by_value.defjvp
def _by_value_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    """The identity's derivative (``custom_vmap`` alone has no reverse mode)."""
    return _by_value(primals[0]), tangents[0]


def materialized(x: Array, index: Array | None = None) -> Array:
    """``x``, written to memory once on the CPU (a fusion boundary, nothing more).

    The boundary is a conditional that returns ``x`` when its predicate holds and zeros
    otherwise: two different branches, which no compiler may merge into one. The predicate
    always holds, but the compiler cannot know it:

    * with ``index``, a traced integer that is never negative and not batched (a loop counter,
      say): ``index ≥ 0``;
    * without, ``isnan(a) or a = a`` for the first value ``a`` of a floating ``x`` (of the whole
      batch, under ``jax.vmap``). Integer and empty arrays are returned as they are.
    """
    if index is not None:
        return _boundary(x, index >= 0)
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.size == 0:
        return x
    return _by_value(x)
