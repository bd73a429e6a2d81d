"""Replication studies: R replications × P database pairs × L orders in one compiled call.

:func:`replicated_bounds` draws each replication in memory and bounds it as
:func:`rdpjax.lower_bound` does, vmapped over the pairs and split over the devices
(:func:`rdpjax.estimator.sharding.map_over_devices`); a second call with the same shapes reuses the
compilation of :func:`_replicate`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._internal.fusion import materialized
from rdpjax._internal.sharding import draw_mesh, map_over_devices, replication_batch_size
from rdpjax._keys import as_key
from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.estimator.api import plan_bound
from rdpjax.estimator.bound_plan import Bound, BoundPlan
from rdpjax.mechanisms.base import Mechanism
from rdpjax.stream.samplers import mechanism_samplers, pilot_draw

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


@functools.partial(jax.jit, static_argnames=("n", "reps", "sampler", "batch_size", "mesh"))
def _replicate(plan, mechanism, xs, xs_prime, keys, *, n, reps, sampler, batch_size, mesh):
    """Bounds of ``reps`` replications on each database pair: leaves shaped (P, R, ...).

    Replication ``r`` of pair ``i`` draws from ``split(keys[i], reps)[r]``; the replications
    are split over the devices of ``mesh``, each one bounding every pair (a ``vmap``).
    """

    def one(rep_keys, plan, mechanism, xs, xs_prime):
        def pair(x, x_prime, k):
            kp, kq = jax.random.split(k)
            p = sampler(kp, n, (mechanism, x))
            q = sampler(kq, n, (mechanism, x_prime))
            return bound_of_draws(plan, p, q)

        return jax.vmap(pair)(xs, xs_prime, rep_keys)

    rep_keys = jax.vmap(lambda k: jax.random.split(k, reps), out_axes=1)(keys)  # (R, P)
    out = map_over_devices(
        one, mesh, rep_keys, plan, mechanism, xs, xs_prime, batch_size=batch_size
    )
    return jax.tree.map(lambda a: jnp.swapaxes(a, 0, 1), out)


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
        out = _replicate(
            plan,
            mechanism,
            jnp.asarray(np.stack(xs)),
            jnp.asarray(np.stack(xps)),
            jax.random.split(k_main, len(pairs)),
            n=n,
            reps=reps,
            sampler=sampler,
            batch_size=batch_size,
            mesh=mesh,
        )
        return jax.tree.map(np.asarray, out)
