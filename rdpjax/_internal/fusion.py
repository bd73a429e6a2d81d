"""A fusion boundary: samples drawn in a program written to memory once before they are binned.

XLA's CPU backend fuses every elementwise consumer of an array with the elementwise ops that made
it, duplicating those ops rather than writing the array out when they count as cheap. A
``jax.random.normal`` sampler's tail (the inverse-erf polynomial: multiplies, adds and selects)
is cheap in that sense, so the binning's scatter operands (indices, packed updates) each
recomputed it. ``lax.optimization_barrier`` does not stop that (XLA's CPU pipeline removes
barriers before fusing); a conditional does: its result is a buffer (the same counts, the
binning beyond the draws faster).

The conditional's predicate must not be batched. Under ``jax.vmap`` a conditional on a batched
predicate becomes a ``select`` of both branches, which XLA fuses like any elementwise op: no
boundary. So :func:`materialized` without an index carries its own batching rule
(``jax.custom_batching.custom_vmap``): a vmapped call writes the whole batch out behind one
conditional whose predicate is read from the batch's first value. Used so in
:meth:`rdpjax.estimator.bound_plan.BoundPlan.bin` (replications drawn in the same program as
their bounds); predicating each replication on its own values would be batched, hence a select,
and was slower. The 1-D positions are not written out as well before the binning's scatter (slower
on samples held in memory).

The stream's scan (:mod:`rdpjax.stream.scan`) passes its loop counter as the predicate instead.

Measured (binning beyond the draws, replications, the stream, what was tried and dropped):
``docs/performance.md``, section "The fusion boundary (rdpjax/_internal/fusion.py)".

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
