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
``python benchmarks/binning_layouts.py``).

The stream's scan uses it (:mod:`rdpjax.stream.scan`): the streamed audit at 10^7 a side took
1.51 against 1.79 times the RNG alone (in one process, interleaved). A replication study, whose
samples are drawn and bounded in one ``lax.map`` step, does not: there the same boundary made
R = 1000 bounds at 10^5 a side slower (1.43 against 1.29 s on two CPU devices, the bounds
identical), so :meth:`rdpjax.estimator.plan.BoundPlan.bin` reads its samples as XLA fuses them.

Accelerators (GPU, TPU) get ``x`` untouched: there a recomputation is cheap next to a round trip
through memory, and a conditional's predicate may cost a host synchronization.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from rdpjax._typing import Array

__all__ = ["materialized"]


def materialized(x: Array, index: Array) -> Array:
    """``x``, written to memory once on the CPU (a fusion boundary, nothing more).

    ``index`` is a traced integer that is never negative and that the compiler cannot know (a
    loop counter, say). The boundary is a conditional that returns ``x`` when ``index ≥ 0`` and
    zeros otherwise: two different branches, which no compiler may merge into one.
    """

    def on_cpu(x: Array, index: Array) -> Array:
        return lax.cond(index >= 0, lambda: x, lambda: jnp.zeros_like(x))

    return lax.platform_dependent(x, index, cpu=on_cpu, default=lambda x, index: x)
