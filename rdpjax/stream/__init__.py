"""Bounds straight from a sampler: streamed draws, split across devices, and vmapped studies.

:func:`rdpjax.lower_bound` takes samples that already exist in memory. Here the samples are
drawn inside the computation instead, from a *sampler* ``sample_fn(key, m) -> (m,) or (m, d)``
(e.g. ``lambda k, m: mech.sample(k, x, m)``):

* :func:`streamed_bound` draws ``n`` outputs per side from what a value of
  :mod:`rdpjax.stream.draws` names (:class:`JaxSamplers`, :class:`MechanismPair`,
  :class:`BlackBox`) and counts them as they come, so the samples never exist in full: JAX
  samplers chunk by chunk inside one ``lax.scan`` (binned by
  :func:`rdpjax.estimator.binning.bin_chunk`), n up to 2^31 per side in memory O(chunk + grid);
  a numpy black box batch by batch, in memory O(batch + grid). The bound is then eq. (16) of
  Kutta, Askin, Dunsche, arXiv:2212.04739v3 computed from the two histograms
  (:meth:`rdpjax.BoundPlan.bound`), exactly as :func:`rdpjax.lower_bound` computes it from the same
  draws binned on the same grid. The chunks can be dealt out to several devices
  (:mod:`rdpjax.estimator.sharding`); one device and D devices draw the same samples. Its twin
  for (ε, δ), ε-DP and GDP claims is :func:`rdpjax.rejection.streamed_set_test`, on the same
  values.
* :func:`replicated_bounds` runs R replications of an audit at n per side, on P database pairs,
  for L orders, as one compiled, vmapped call; a second call with the same shapes reuses it.

**Draws.** (A black box's: :class:`BlackBox`.) With ``k_pilot, k_p, k_q = jax.random.split(key,
3)``, chunk ``i < n // chunk`` of
P is ``sample_p(jax.random.fold_in(k_p, i), chunk)`` (likewise Q), and the last ``n mod chunk``
draws are ``sample_p(jax.random.fold_in(k_p, n // chunk), n mod chunk)``.
:func:`streamed_samples` materializes exactly these draws (for tests and small n). The sampler
is traced inside ``rdpjax.float64()``: ``jax.random`` samplers without an explicit ``dtype``
then draw float64, which costs about 1.3× float32 on CPU; pass ``dtype=jnp.float32`` for speed.

**Grid and settings.** Shapes must be fixed before the first sample is drawn, so the grid range
comes from the user (``grid=(low, high)``), or from a pilot draw of ``pilot`` outputs per side
from ``k_pilot`` (independent of the streamed draws), widened by ``margin`` times its width on
each side. The default bandwidth and floor (:class:`rdpjax.Defaults`) use the pilot's pooled
robust scale and the full n. Discrete outputs (integer codes) use the support ``[0,
support_size)`` (a mechanism's alphabet, the user's, or the pilot's largest code + 1).

**Outside mass.** Samples that fall outside the grid range (codes outside the support) are never
dropped: with ``outside="clip"`` (default) they are clamped onto the nearest edge of the range
and counted in ``Bound.outside`` (and a warning is issued). Clamping is a fixed map applied to
every sample, so by the data-processing inequality the bound stays valid; dropping them would
condition on a region, which can raise a divergence. ``outside="raise"`` raises instead.
Non-finite draws always raise.

**Progress.** ``progress=`` (a callable ``progress(done, total)``) is called from inside the
scan through one fixed host callback, so the compiled stream depends only on whether progress is
on; about 128 reports over a long run, no more often than every 2^22 draws of a device, and the
same counts and bound as without progress (:mod:`rdpjax._internal.progress`, with the fusion
boundary, the sharding and the program budget among the internal tricks: :mod:`rdpjax._internal`).

**Modules**, in the order of the data flow:

* :mod:`rdpjax.stream.options`: :class:`StreamOptions`, the stream's settings in one object;
* :mod:`rdpjax.stream.samplers`: samplers as static jit arguments, their output kind, the pilot
  draw;
* :mod:`rdpjax.stream.draws`: what to draw from, a value bound to the key at the door
  (:class:`JaxSamplers`, :class:`MechanismPair`, :class:`BlackBox`);
* :mod:`rdpjax.stream.sources`: the :class:`Source` protocol (output kind, pilot, counts) and
  its two kinds: :class:`JaxSource` (compiled scans) and :class:`NumpySource` (batches of a
  numpy black box);
* :mod:`rdpjax.stream.pilot`: argument checks and the pilot → plan/grid step (``fix_settings``);
* :mod:`rdpjax.stream.from_counts`: the counts → bound step (``bound_from_counts``);
* :mod:`rdpjax.stream.driver`: :func:`bound_of_source`, the one driver every streamed bound
  runs: checks, kind, settings from the pilot, counts, bound;
* :mod:`rdpjax.stream.looks`: :func:`~rdpjax.stream.looks.run_looks`, the one looks driver
  (batches of both sides on a schedule of ends, an accumulator fed and looked at, checkpoints)
  that the sequential Rényi looks and the betting test run on;
* :mod:`rdpjax.stream.scan`: the compiled draw-and-bin scan over chunks;
* :mod:`rdpjax.stream.streamed`: :func:`streamed_bound`, :func:`streamed_samples`;
* :mod:`rdpjax.stream.replicate`: :func:`replicated_bounds`, :func:`bound_of_draws`, and
  ``run_replications``, the one replication driver (draws, then bounds, split over the devices)
  that :func:`replicated_bounds` and :func:`rdpjax.studies.coverage` run.
"""

from rdpjax.stream.draws import BlackBox, Draws, JaxSamplers, MechanismPair
from rdpjax.stream.driver import bound_of_source
from rdpjax.stream.options import (
    DEFAULT_BATCH,
    DEFAULT_PILOT,
    DEFAULT_STREAM_CHUNK,
    Looks,
    StreamOptions,
)
from rdpjax.stream.replicate import bound_of_draws, replicated_bounds
from rdpjax.stream.sources import JaxSource, NumpySource, Source
from rdpjax.stream.streamed import streamed_bound, streamed_samples

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_STREAM_CHUNK",
    "StreamOptions",
    "DEFAULT_PILOT",
    "streamed_bound",
    "streamed_samples",
    "replicated_bounds",
    "bound_of_draws",
    "BlackBox",
    "Draws",
    "JaxSamplers",
    "Looks",
    "MechanismPair",
    "bound_of_source",
    "JaxSource",
    "NumpySource",
    "Source",
]
