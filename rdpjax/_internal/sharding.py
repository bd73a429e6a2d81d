"""Splitting independent draws across devices and summing what they produce.

A streamed bound (:mod:`rdpjax.stream`) is a sum over chunks: chunk ``i`` draws its samples
from ``fold_in(key, i)`` and adds them to a histogram. The chunks are independent, so they can
be dealt out to devices: :func:`sum_over_devices` gives each device of a one-axis
:class:`jax.sharding.Mesh` a contiguous block of chunk indices, runs the same scan on each
(``jax.shard_map``), and adds the per-device histograms with one ``psum``. Which device draws
a chunk changes nothing about the chunk, so one device and D devices see the same samples and
give the same counts up to the order of floating-point additions. Samples already in memory
are split the same way by :func:`sum_over_blocks`: each device bins its contiguous block of them
(:func:`rdpjax.estimator.binning.linear_binning` with ``mesh=``).

Cost: the per-device work is ⌈chunks / D⌉ chunks, the communication one all-reduce of the
histogram (O(grid)) at the end. Chunk indices past the last are padding: the task function
must ignore them (the streamed kernel masks them out).

Multi-host (several processes, each with its own devices): start every process with the same
program and call, before any other JAX call,

.. code-block:: python

    import jax
    jax.distributed.initialize()  # or (coordinator_address="host0:1234",
                                  #     num_processes=N, process_id=i) off a managed cluster
    import rdpjax
    from rdpjax.stream import JaxSamplers, streamed_bound
    bound = streamed_bound(jax.random.key(0), JaxSamplers(sample_p, sample_q), [2, 5, 7],
                           n=2**31, devices=jax.devices())  # every device of every process

``jax.devices()`` then lists the devices of all processes; the mesh spans them, every process
runs its share of the chunks, and the ``psum`` leaves the full histogram (and the same bound)
on every process. Inputs are passed as host numpy data replicated on every process, as
multi-controller JAX requires. On CPUs the processes need cross-process collectives,
``jax.config.update("jax_cpu_collectives_implementation", "gloo")`` (jax 0.10's default; without
them XLA fails with "Multiprocess computations aren't implemented on the CPU backend").
Tested on one machine (``tests/stream/test_multihost.py``): two processes with two forced CPU
devices each, joined by ``jax.distributed`` on 127.0.0.1 with gloo, compute a streamed bound, a
:func:`rdpjax.stream.replicated_bounds` and a :func:`rdpjax.studies.coverage` study and a
``linear_binning`` over the four devices, and both match one process with four forced devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``) to ``rtol=1e-9``. Untested across
machines (a network between them) and on accelerators.

Replications of a study (:func:`rdpjax.stream.replicated_bounds`, :func:`rdpjax.studies.coverage`)
are independent too, but each returns its own result: :func:`map_over_devices` gives each
device a contiguous block of them and maps the replication over its block in small vmapped
batches (:func:`replication_batch_size`), and the results come back in order, gathered onto
every device (so that every process holds them all).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec

__all__ = [
    "AXIS",
    "cpu_cores",
    "draw_mesh",
    "map_over_devices",
    "replication_batch_size",
    "sum_over_blocks",
    "sum_over_devices",
]

AXIS = "draws"
"""Name of the mesh axis along which draws are split."""


def draw_mesh(devices: Sequence[jax.Device] | int | None = None) -> Mesh:
    """A one-axis mesh (axis :data:`AXIS`) over ``devices``.

    Args:
      devices: a sequence of devices; an int ``k`` for the first ``k`` of ``jax.devices()``;
        ``None`` for all of ``jax.devices()`` (every device of every process).

    Raises:
      ValueError: for an empty device list or ``k`` outside ``[1, len(jax.devices())]``.
    """
    available = jax.devices()
    if devices is None:
        devices = available
    elif isinstance(devices, int) and not isinstance(devices, bool):
        if not 1 <= devices <= len(available):
            raise ValueError(f"devices must be in [1, {len(available)}]; got {devices}.")
        devices = available[:devices]
    devices = list(devices)
    if not devices:
        raise ValueError("devices must not be empty.")
    return Mesh(np.asarray(devices), (AXIS,))


def sum_over_devices(task: Callable[..., Any], num_tasks: int, mesh: Mesh, *args: Any) -> Any:
    """Run ``task(ids, *args)`` on every device of ``mesh`` and sum the results.

    Device ``k`` gets the task indices ``k·b, …, k·b + b − 1`` with ``b = ⌈num_tasks / D⌉``
    (int32, some ≥ ``num_tasks`` when D does not divide it). ``args`` are replicated.
    Call it inside ``jax.jit``.

    Args:
      task: ``task(ids, *args)`` returning a pytree of arrays (e.g. histograms) to be summed.
      num_tasks: number of real tasks (static).
      mesh: a mesh from :func:`draw_mesh`.
      *args: replicated inputs (arrays or pytrees of arrays).

    Returns:
      The sum over devices of ``task``'s outputs, replicated.
    """
    per_device = max(1, math.ceil(num_tasks / mesh.size))

    def with_ids(*local_args):
        start = lax.axis_index(AXIS) * per_device
        ids = (start + jnp.arange(per_device, dtype=jnp.int32)).astype(jnp.int32)
        return task(ids, *local_args)

    return _summed(with_ids, mesh, tuple(PartitionSpec() for _ in args))(*args)


def sum_over_blocks(fn: Callable[[Any], Any], mesh: Mesh, x: Any) -> Any:
    """Run ``fn(block)`` on every device of ``mesh``, each on its block of ``x``, and sum them.

    Each block is contiguous: the leading axis split in ``D`` equal parts (``D`` must divide it).
    Call it inside ``jax.jit``; ``x`` already split that way
    (``NamedSharding(mesh, PartitionSpec(AXIS))``) is not moved.

    Returns:
      The sum over devices of ``fn``'s outputs (a pytree of arrays), replicated.
    """
    return _summed(fn, mesh, PartitionSpec(AXIS))(x)


def _summed(fn: Callable[..., Any], mesh: Mesh, in_specs: Any) -> Callable[..., Any]:
    """``fn`` under ``jax.shard_map`` over ``mesh`` with its outputs ``psum``-med over devices."""

    def local(*local_args):
        return jax.tree.map(lambda a: lax.psum(a, AXIS), fn(*local_args))

    # check_vma=False: scan carries inside fn start replicated and become device-varying; the
    # psum makes the outputs replicated again, as out_specs says.
    return jax.shard_map(
        local, mesh=mesh, in_specs=in_specs, out_specs=PartitionSpec(), check_vma=False
    )


# ----------------------------------------------------------------------------- replications


def cpu_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


_CPU_BATCH_SAMPLES = 2**17
"""Samples per side, per CPU core, that one vmapped batch of replications holds on a CPU
device: a device gets ``2^17 · ⌊cores / devices⌋``. Small batches keep a replication's arrays
in the CPU's caches; a device with more cores (its intra-op threads) wants wider ones. Chosen
by ad hoc sweeps on the 2-core machine (``docs/performance.md``, section "Replications per batch
on a CPU (_CPU_BATCH_SAMPLES)"); untested on machines with more cores."""

_ACCELERATOR_BATCH_SAMPLES = 2 * 10**7
"""The same for GPUs and TPUs, which need wide batches to fill the device (the H200 ran R =
1000 replications of n = 1e5 24× faster than a loop in batches of 200)."""


def replication_batch_size(n: int, reps: int, mesh: Mesh, pairs: int = 1) -> int:
    """Default replications per vmapped batch on each device of ``mesh``.

    At most about ``2^17 · ⌊cores / D⌋`` samples per side on a CPU mesh of D devices
    (:data:`_CPU_BATCH_SAMPLES`) and 2·10^7 on accelerators, counting ``pairs`` database pairs
    vmapped together; at least 1. The ``⌈reps / D⌉`` replications a device gets are then cut
    into batches of equal size (k batches of ``⌈⌈reps / D⌉ / k⌉``), so that
    :func:`map_over_devices` pads fewer than k of them.
    """
    if all(d.platform == "cpu" for d in mesh.devices.flat):
        budget = _CPU_BATCH_SAMPLES * max(1, cpu_cores() // mesh.size)
    else:
        budget = _ACCELERATOR_BATCH_SAMPLES
    per_device = -(-reps // mesh.size)
    batches = -(-per_device // max(1, budget // (n * pairs)))
    return -(-per_device // batches)


def map_over_devices(
    fn: Callable[..., Any], mesh: Mesh, xs: Any, *args: Any, batch_size: int, gather: bool = True
) -> Any:
    """``fn(x, *args)`` for every ``x`` along the leading axis of ``xs``, split over devices.

    Device ``k`` of ``mesh`` gets the contiguous block ``k·b, …, k·b + b − 1`` and maps ``fn``
    over it with ``lax.map`` in vmapped batches of ``batch_size``; the results come back in the
    order of ``xs``. Every device runs whole batches, so that one vmapped ``fn`` is compiled
    (a last, smaller batch would compile a second one: seconds for a bound): ``b`` is
    ``⌈R / D⌉`` rounded up to a multiple of ``batch_size``, the last entry is repeated to fill
    the blocks, and its extra results are dropped. A ``batch_size`` that divides ``⌈R / D⌉``
    (as :func:`replication_batch_size` picks them, nearly) wastes nothing. Call it inside
    ``jax.jit``.

    Args:
      fn: ``fn(x, *args)`` → a pytree of arrays, for one entry ``x`` of ``xs``.
      mesh: a mesh from :func:`draw_mesh`.
      xs: a pytree of arrays (``jax.random`` keys included) with a common leading length R.
      *args: inputs every call shares, replicated on every device (arrays or pytrees).
      batch_size: entries vmapped together on a device.
      gather: all-gather the results onto every device (default). ``False`` leaves each
        device's results where they were computed, split along the leading axis as ``xs``
        was: for large intermediate results (samples) that a second ``map_over_devices``
        over the same mesh consumes in place. It then needs no padding: R a multiple of
        ``D · batch_size``.

    Returns:
      The results stacked along a leading axis of length R, as ``lax.map`` would return them,
      replicated on every device of ``mesh`` (one all-gather at the end), or split over them
      (``gather=False``).

    Raises:
      ValueError: if ``xs`` is empty (R = 0) or ``batch_size < 1``, or with ``gather=False``
        if R is not a multiple of ``D · batch_size``.
    """
    reps = jax.tree.leaves(xs)[0].shape[0]
    if reps < 1 or batch_size < 1:
        raise ValueError(
            f"map_over_devices needs R ≥ 1 and batch_size ≥ 1; got {reps}, {batch_size}."
        )
    batch_size = min(batch_size, -(-reps // mesh.size))
    per_device = -(-reps // (mesh.size * batch_size)) * batch_size
    pad = per_device * mesh.size - reps
    if pad and not gather:
        raise ValueError(
            f"map_over_devices(gather=False) needs R a multiple of D · batch_size = "
            f"{mesh.size} · {batch_size}; got R = {reps}."
        )

    def padded(a):
        return jnp.concatenate([a, jnp.repeat(a[-1:], pad, axis=0)]) if pad else a

    def local(local_xs, *local_args):
        out = lax.map(lambda x: fn(x, *local_args), local_xs, batch_size=batch_size)
        if not gather:
            return out
        # Gathered onto every device: across processes, a result split over the mesh would
        # not be addressable (np.asarray fails on it); one all-gather of R results is cheap.
        return jax.tree.map(lambda a: lax.all_gather(a, AXIS, tiled=True), out)

    out = jax.shard_map(
        local,
        mesh=mesh,
        in_specs=(PartitionSpec(AXIS),) + tuple(PartitionSpec() for _ in args),
        out_specs=PartitionSpec() if gather else PartitionSpec(AXIS),
        check_vma=False,
    )(jax.tree.map(padded, xs), *args)
    return jax.tree.map(lambda a: a[:reps], out) if pad else out
