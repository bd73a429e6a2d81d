"""Replication studies: R replications × P database pairs × L orders in one compiled call.

:func:`run_replications` is the one driver of replications drawn from a mechanism and bounded
in memory, split over the devices (:func:`rdpjax._internal.sharding.map_over_devices`) and
vmapped over the pairs: :func:`replicated_bounds` runs it with a plan fixed beforehand (one
program draws and bounds; a second call with the same shapes reuses the compilation of
:func:`_replicate`), :func:`rdpjax.studies.coverage` with a plan read from its first
replication (a program of draws, then one of bounds: :func:`_draws`, :func:`_bounds`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from rdpjax._internal.fusion import materialized
from rdpjax._internal.sharding import draw_mesh, map_over_devices, replication_batch_size
from rdpjax._keys import as_key
from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.estimator.api import plan_bound
from rdpjax.estimator.bound_plan import Bound, BoundPlan
from rdpjax.mechanisms.base import Mechanism
from rdpjax.stream.samplers import Sampler, mechanism_samplers, pilot_draw

MATERIALIZE_ROWS = 2**21
"""Samples of up to this many rows a side are written to memory by :func:`bound_of_draws`."""


def bound_of_draws(
    plan: BoundPlan, p: jax.Array, q: jax.Array, *, materialize_rows: int = MATERIALIZE_ROWS
) -> Bound:
    """``plan(p, q)`` for samples drawn in the same compiled program (a replication study).

    Continuous samples of up to ``materialize_rows`` rows are first written to memory on the
    CPU (:func:`rdpjax._internal.fusion.materialized`): otherwise XLA fuses the sampler into each
    step that reads them and recomputes it (R = 1000 bounds at 1e5 a side: 0.98-1.01 s against
    1.13-1.15 s, identical bounds). Larger ones are not: given in memory, their copy cost more
    than it saves (10^7 a side: 39 against 26 ms). The values, and so the bound, are unchanged.
    """
    if not plan.discrete and max(p.shape[0], q.shape[0]) <= materialize_rows:
        p, q = materialized(p), materialized(q)
    return plan(p, q)


def pair_draws(keys, mechanism, xs, xs_prime, *, n: int, samplers: tuple[Sampler, Sampler]):
    """One replication's outputs ``(p, q)`` on one database pair, or on P pairs (a ``vmap``).

    A pair with key ``k`` draws its outputs on ``x`` with ``samplers[0]`` from ``split(k)[0]`` and
    those on ``x_prime`` with ``samplers[1]`` from ``split(k)[1]``. ``keys`` one key: one pair,
    ``(x, x_prime) = (xs, xs_prime)``; ``keys`` of shape ``(P,)``: pair ``i`` is ``(xs[i],
    xs_prime[i])``, and ``p``, ``q`` have a leading axis P.
    """

    def pair(x, x_prime, k):
        kp, kq = jax.random.split(k)
        return samplers[0](kp, n, (mechanism, x)), samplers[1](kq, n, (mechanism, x_prime))

    return pair(xs, xs_prime, keys) if keys.ndim == 0 else jax.vmap(pair)(xs, xs_prime, keys)


def _pair_bounds(pq, plan, *, materialize_rows, pairs):
    """:func:`bound_of_draws` of one pair's samples ``pq = (p, q)``, or of P pairs' (a ``vmap``).

    One pair is not given an axis of one: under the batches' ``vmap`` that changes how XLA
    reduces (by up to 7e-13 relative, the coverage study's bounds on two devices).
    """

    def bound(p, q):
        return bound_of_draws(plan, p, q, materialize_rows=materialize_rows)

    return jax.vmap(bound)(*pq) if pairs else bound(*pq)


@functools.partial(jax.jit, static_argnames=("pairs", "reps"))
def _pair_keys(key, *, pairs, reps):
    """``(R, P)`` keys: replication ``r`` of pair ``i`` is ``split(split(key, P)[i], R)[r]``."""
    return jax.vmap(lambda k: jax.random.split(k, reps), out_axes=1)(jax.random.split(key, pairs))


@functools.partial(jax.jit, static_argnames=("n", "chunk", "samplers", "batch_size", "mesh"))
def _replicate(plan, args, keys, start, *, n, chunk, samplers, batch_size, mesh):
    """Bounds of replications ``start … start + chunk − 1`` of ``keys``, drawn in this program.

    The replications are split over the devices of ``mesh``, each one drawing and bounding every
    pair (:func:`pair_draws`, :func:`bound_of_draws`); leaves shaped ``(chunk, P, …)``.
    """
    keys = jax.lax.dynamic_slice_in_dim(keys, start, chunk)

    def one(k, plan, args):
        pq = pair_draws(k, *args, n=n, samplers=samplers)
        return _pair_bounds(pq, plan, materialize_rows=MATERIALIZE_ROWS, pairs=k.ndim == 1)

    return map_over_devices(one, mesh, keys, plan, args, batch_size=batch_size)


@functools.partial(jax.jit, static_argnames=("n", "chunk", "samplers", "batch_size", "mesh"))
def _draws(args, keys, start, *, n, chunk, samplers, batch_size, mesh):
    """The outputs of replications ``start … start + chunk − 1`` of ``keys``, and the first's.

    They are left split over the devices, and the first replication's (its first pair's) are
    gathered: the pilot, when it is the study's first key. Real outputs are float64
    (:func:`_float64_if_real`). One compilation per mechanism type and shapes.
    """
    keys = jax.lax.dynamic_slice_in_dim(keys, start, chunk)

    def one(k, args):
        pq = pair_draws(k, *args, n=n, samplers=samplers)
        return tuple(map(_float64_if_real, pq))

    p, q = map_over_devices(one, mesh, keys, args, batch_size=batch_size, gather=False)
    everywhere = NamedSharding(mesh, PartitionSpec())
    first = tuple(jax.lax.with_sharding_constraint(a[(0,) * keys.ndim], everywhere) for a in (p, q))
    return (p, q), first


def _float64_if_real(x):
    """Real outputs as float64 (the bound computes in it anyway), integer codes as they are.

    Then a float32 mechanism shares the compiled bounds of a float64 one with the same layout
    (the binning casts to float64 first and the scale too, so the bounds are the same).
    """
    return x.astype(jnp.float64) if jnp.issubdtype(x.dtype, jnp.floating) else x


@functools.partial(jax.jit, static_argnames=("pairs", "batch_size", "mesh"))
def _bounds(plan, p, q, *, pairs, batch_size, mesh):
    """Bounds of every replication's samples (``(C, [P,] n, …)``), as :func:`_draws` left them.

    Free of the mechanism: one compilation per plan layout and shapes, shared by every mechanism
    whose study has them. The samples are in memory already: no fusion boundary.
    """

    def one(pq, plan):
        return _pair_bounds(pq, plan, materialize_rows=0, pairs=pairs)

    return map_over_devices(one, mesh, (p, q), plan, batch_size=batch_size)


def _divisor_at_most(m: int, cap: int) -> int:
    """The largest divisor of ``m`` that is at most ``cap`` (at least 1)."""
    return max(b for b in range(1, min(m, max(cap, 1)) + 1) if m % b == 0)


def run_replications(
    keys,
    plan: BoundPlan | Callable[[np.ndarray, np.ndarray], BoundPlan],
    args: tuple,
    *,
    n: int,
    samplers: tuple[Sampler, Sampler],
    batch_size: int,
    mesh,
    chunk: int | None = None,
    grid_points: int | None = None,
) -> Bound:
    """Draw and bound every replication of ``keys``, chunk by chunk: the one replication driver.

    Replication ``r`` draws from ``keys[r]`` by :func:`pair_draws` with ``args = (mechanism, xs,
    xs_prime)``: keys of shape ``(R,)`` draw one pair ``(xs, xs_prime)``, keys ``(R, P)`` P pairs
    (the databases stacked). Each pair is bounded as :func:`rdpjax.lower_bound` bounds it. Each
    chunk of ``chunk`` replications (default: all) is split over the devices of ``mesh``
    (:func:`rdpjax._internal.sharding.map_over_devices`) and vmapped ``batch_size`` at a time on
    each. A replication's results follow from its key alone.

    * ``plan`` a :class:`rdpjax.BoundPlan`: each chunk is one program that draws and bounds
      (:func:`bound_of_draws`): one compilation per shapes and layout.
    * ``plan`` a function ``plan(p, q) → BoundPlan``: each chunk is drawn by one program and left
      on the devices, the first pair of replication 0 plans the grid (a pilot), and a second
      program bounds them, ``⌊grid_points / grid size⌋`` replications at most a batch (a
      divisor of a device's share): the draws compile once per mechanism type and shapes, the
      bounds once per layout and shapes, whatever the mechanism. ``len(keys)`` must then be a
      multiple of ``chunk``, itself one of ``mesh.size · batch_size``.

    Returns:
      A :class:`rdpjax.Bound` whose array fields have a leading axis R (then P, with pairs), as
      numpy arrays.
    """
    chunk = chunk or keys.shape[0]
    options = dict(n=n, chunk=chunk, samplers=samplers, batch_size=batch_size, mesh=mesh)
    fused = isinstance(plan, BoundPlan)
    planned, bound_batch, results = plan if fused else None, batch_size, []
    for start in range(0, keys.shape[0], chunk):
        if fused:
            results.append(_replicate(planned, args, keys, np.int32(start), **options))
            continue
        (p, q), pilot = _draws(args, keys, np.int32(start), **options)
        if planned is None and not isinstance(plan, BoundPlan):  # the pilot plans the grid
            planned = plan(*map(np.asarray, pilot))
            fits = batch_size if grid_points is None else grid_points // math.prod(planned.shape)
            bound_batch = _divisor_at_most(chunk // mesh.size, min(batch_size, fits))
        pairs = keys.ndim == 2
        results.append(_bounds(planned, p, q, pairs=pairs, batch_size=bound_batch, mesh=mesh))
    return jax.tree.map(lambda *a: np.concatenate([np.asarray(x) for x in a]), *results)


def replicated_bounds(
    key,
    mechanism: Mechanism,
    pairs: Sequence[tuple],
    lam,
    *,
    n: int,
    reps: int,
    batch_size: int | None = None,
    devices=None,
    **options,
) -> Bound:
    """R replications × P database pairs × L orders of the in-memory bound, one compiled call.

    Each replication draws n outputs per side from the mechanism on x and x', and bounds ``D_λ`` for
    every order as :func:`rdpjax.lower_bound` does (the orders of one replication are simultaneous,
    Bonferroni). The replications are split over the devices
    (:func:`rdpjax.estimator.sharding.map_over_devices`), each device runs its share as ``lax.map``
    over vmapped batches, and the pairs are a ``vmap``: one compilation per (n, R, P, L, layout,
    devices), reused by later calls with the same shapes (other keys, mechanism parameters or
    databases). The grid layout is planned on a pilot draw of each pair; the finest one is used for
    all pairs.

    Args:
      key: a ``jax.random`` key.
      mechanism: a :class:`rdpjax.mechanisms.Mechanism`.
      pairs: a non-empty sequence of adjacent pairs ``(x, x')``, all of the same shapes.
      lam: an order or a sequence of orders.
      n: outputs per side per replication (≥ 2).
      reps: replications per pair (≥ 1).
      batch_size: replications vmapped together on each device (default:
        :func:`rdpjax.estimator.sharding.replication_batch_size`: at most 2^17 · ⌊cores / devices⌋ /
        (n · P) on a CPU, 2·10^7 / (n · P) on accelerators, at least 1, in equal batches).
      devices: the devices to split the replications over, as for :func:`streamed_bound`
        (default: every device). Neither the devices nor the batch size change a
        replication's draws (its key is fixed): results agree to rounding.
      **options: as for :func:`rdpjax.plan_bound` (``alpha``, ``bandwidth``, ``floor``, …).

    Returns:
      A :class:`rdpjax.Bound` whose array fields have leading axes ``(P, R)``.
    """
    n = check_int(n, "n", 2)
    reps = check_int(reps, "reps", 1)
    pairs = list(pairs)
    if not pairs or not all(isinstance(pr, tuple | list) and len(pr) == 2 for pr in pairs):
        raise ValueError("pairs must be a non-empty sequence of (x, x_prime) pairs.")
    samplers = [mechanism_samplers(mechanism, x, xp) for x, xp in pairs]
    sampler, spec = samplers[0][0], samplers[0][3]
    xs = [np.asarray(x) for x, _ in pairs]
    xps = [np.asarray(xp) for _, xp in pairs]
    if len({a.shape for a in xs + xps}) != 1:
        raise ValueError("every database of every pair must have the same shape.")
    mesh = draw_mesh(devices)
    if batch_size is None:
        batch_size = replication_batch_size(n, reps, mesh, len(pairs))
    batch_size = check_int(batch_size, "batch_size", 1)
    key = as_key(key)
    k_pilot, k_main = jax.random.split(key)
    with float64():
        pilots = []
        for i, (_, a_p, a_q, _) in enumerate(samplers):
            kp, kq = jax.random.split(jax.random.fold_in(k_pilot, i))
            pilots.append(
                (
                    np.asarray(pilot_draw(kp, a_p, sampler=sampler, m=n)),
                    np.asarray(pilot_draw(kq, a_q, sampler=sampler, m=n)),
                )
            )
        support = None
        if spec.is_discrete:
            support = spec.alphabet_size or 1 + int(max(c.max() for pr in pilots for c in pr))
        plans = [
            plan_bound(p, q, lam, discrete=spec.is_discrete, support_size=support, **options)[0]
            for p, q in pilots
        ]
        plan = max(plans, key=lambda pl: math.prod(pl.shape))
        out = run_replications(
            _pair_keys(k_main, pairs=len(pairs), reps=reps),
            plan,
            (mechanism, jnp.asarray(np.stack(xs)), jnp.asarray(np.stack(xps))),
            n=n,
            samplers=(sampler, sampler),
            batch_size=batch_size,
            mesh=mesh,
        )
        return jax.tree.map(lambda a: np.swapaxes(a, 0, 1), out)
