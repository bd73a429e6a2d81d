"""The searches, as chains of one restart each: ``run(params, j, key, λ, mutation key)``.

A chain maximizes the objective of :mod:`rdpjax.search.objective` over the pair
``(base, a, b, j)`` of :mod:`rdpjax.search.space` (the methods are described in
:mod:`rdpjax.search`): the gradient chain by projected ascent with an optax transformation
(:func:`choose_method` says when), the evolutionary chain by a (1+P) evolution strategy. One
chain per (order, restart) is ``vmap``-ed into one compiled ``lax.scan`` (:func:`search_fn`),
which also evaluates each chain's candidates (:data:`CANDIDATES`) at every order on the
selection draws; :func:`select_candidate` then keeps the one whose worst order comes closest
to that order's best.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from rdpjax.search.space import SearchSpace, assemble, from_uniform, nearest_vertex

__all__ = ["CANDIDATES", "METHODS", "choose_method", "search_fn", "select_candidate"]

METHODS = ("auto", "gradient", "evolutionary")
"""The values of ``method`` that :func:`rdpjax.search.find_pair` takes."""
CANDIDATES = ("search", "nearest vertex", "others at low", "others at high")
"""The kinds of candidate pairs made from each restart's final pair (``SearchResult.candidate``)."""


def choose_method(method, discrete: bool, space):
    """The search to run and why (see :func:`~rdpjax.search.find_pair`).

    A gradient that turns out to be zero throughout sends ``"auto"`` to the evolutionary search
    afterwards.
    """
    if discrete:
        if method == "gradient":
            raise ValueError("method='gradient' needs continuous outputs; this one is discrete.")
        return "evolutionary", "discrete outputs: the relative frequencies have no gradient"
    if space.levels is not None:
        if method == "gradient":
            raise ValueError("method='gradient' needs a continuous domain; levels was given.")
        return "evolutionary", f"finite input domain ({space.levels} levels per entry)"
    if method != "auto":
        return method, "requested"
    return "gradient", "continuous outputs, non-zero autodiff gradient through the sampler"


def _default_optimizer(space: SearchSpace, steps: int):
    """Adam with a cosine-decayed step of 5% of the domain width (to 0.25% at the end)."""
    schedule = optax.cosine_decay_schedule(0.05 * space.width, steps, alpha=0.05)
    return optax.adam(schedule)


def _gradient_chain(objective, space, optimizer, steps):
    """Projected gradient ascent of one restart.

    It returns the best parameters evaluated (the last update is not), the objective before each
    step, and whether a gradient was non-zero.
    """

    def run(params, j, key, lam, _unused_key):
        def value(p):
            x, x_prime = assemble(p["base"], p["a"], p["b"], j)
            return objective(x, x_prime, key, lam)

        def step(carry, _):
            params, state, best, best_value, moved = carry
            val, grad = jax.value_and_grad(value)(params)
            grad = jax.tree.map(lambda g: jnp.where(jnp.isfinite(g), -g, 0.0), grad)  # ascent
            moved = moved | jnp.any(jnp.stack([jnp.any(g != 0) for g in jax.tree.leaves(grad)]))
            better = val > best_value
            best = jax.tree.map(lambda new, old: jnp.where(better, new, old), params, best)
            best_value = jnp.maximum(val, best_value)
            # optax's Adam raises a Python float to its int32 step count (bias correction):
            # standard dtype promotion there, where a caller runs jax's strict mode.
            with jax.numpy_dtype_promotion("standard"):
                updates, state = optimizer.update(grad, state, params)
            params = optax.apply_updates(params, updates)
            # Bounds as trees: optax 0.2.8's projection_box rejects scalar bounds on a dict.
            low = jax.tree.map(lambda t: jnp.full_like(t, space.low), params)
            high = jax.tree.map(lambda t: jnp.full_like(t, space.high), params)
            params = optax.projections.projection_box(params, low, high)
            return (params, state, best, best_value, moved), val

        init = (params, optimizer.init(params), params, -jnp.inf, jnp.asarray(False))
        (_, _, best, _, moved), trace = lax.scan(step, init, None, length=steps)
        return best, j, trace, moved

    return run


def _mutate(key, state, sigma, space: SearchSpace):
    """One proposal of the evolutionary search: a few entries changed, perhaps a, b swapped.

    It resamples or perturbs a few entries of the base and each of a, b; sometimes it swaps a
    and b (the reverse direction) or moves the entry j.

    All its randomness comes from one uniform draw (one PRNG hash to compile, not fifteen).
    """
    base, a, b, j = state
    entries = jnp.concatenate([base, a[None], b[None]])  # (m + 2, *row)
    u = jax.random.uniform(key, (4 * entries.size + 3,), minval=1e-12, maxval=1.0 - 1e-12)
    u_on, u_fresh, u_value, u_step = u[: 4 * entries.size].reshape(4, *entries.shape)
    prob = jnp.concatenate([jnp.full(space.m, min(1.0, 2.0 / space.m)), jnp.full(2, 0.5)])
    on = u_on < prob.reshape(-1, *([1] * len(space.row)))
    fresh_value = from_uniform(u_value, space)
    step = sigma * space.width * jax.scipy.special.ndtri(u_step)
    new = jnp.where(u_fresh < 0.3, fresh_value, entries + step)
    entries = space.snap(jnp.where(on, new, entries))
    base, a, b = entries[: space.m], entries[space.m], entries[space.m + 1]
    u_swap, u_move, u_j = u[-3], u[-2], u[-1]
    a, b = jnp.where(u_swap < 0.1, b, a), jnp.where(u_swap < 0.1, a, b)
    j = jnp.where(
        u_move < 0.1, jnp.minimum(jnp.floor(u_j * space.m), space.m - 1).astype(j.dtype), j
    )
    return base, a, b, j


def _evolution_chain(objective, space, steps, population):
    """A (1+P) evolution strategy on common random numbers.

    The mutation scale decays geometrically from 30% to 3% of the domain width.
    """

    def run(params, j, key, lam, key_mutate):
        def value(state):
            x, x_prime = assemble(*state)
            return objective(x, x_prime, key, lam)

        def step(carry, t):
            state, current = carry
            sigma = 0.3 * 0.1 ** (t / max(steps - 1, 1))
            proposals = jax.vmap(lambda k: _mutate(k, state, sigma, space))(
                jax.random.split(jax.random.fold_in(key_mutate, t), population)
            )
            values = jax.vmap(value)(proposals)
            best = jnp.argmax(values)
            accept = values[best] > current
            state = jax.tree.map(
                lambda old, new: jnp.where(accept, new[best], old), state, proposals
            )
            current = jnp.where(accept, values[best], current)
            return (state, current), current

        # The incumbent starts at −∞: the first step keeps the best of its proposals (one copy
        # of the objective fewer to compile).
        state = (params["base"], params["a"], params["b"], j)
        (state, _), trace = lax.scan(step, (state, -jnp.inf), jnp.arange(steps))
        base, a, b, j = state
        return {"base": base, "a": a, "b": b}, j, trace, jnp.asarray(True)

    return run


def _initial_state(space: SearchSpace, key_init, per_restart, n_orders: int, restarts: int):
    """Inputs of every chain c = order · restarts + restart (traced).

    They are uniform initial pairs, restart r changing entry ``r mod m``; restart r's search key
    (shared by the orders); a mutation key per chain.
    """
    chains = n_orders * restarts
    values = from_uniform(jax.random.uniform(key_init, (chains, space.m + 2, *space.row)), space)
    params = {"base": values[:, : space.m], "a": values[:, space.m], "b": values[:, space.m + 1]}
    j = jnp.tile(jnp.arange(restarts) % space.m, n_orders)
    chain_keys = jnp.concatenate([per_restart[:restarts]] * n_orders)
    mutation_keys = jax.random.split(per_restart[restarts], chains)
    return params, j, chain_keys, mutation_keys


def search_fn(method, objective, selection, space, orders, steps, population, optimizer):
    """One compiled function: every chain's search, then every candidate evaluated.

    Every candidate is evaluated at every order on the selection draws. Each chain's final pair
    gives four candidates (see :data:`CANDIDATES`): itself, its nearest vertex of the box, and the
    same differing entry with all other entries at ``low`` or at ``high`` (extreme pairs are often
    the worst; the selection draws decide). Returns ``(x, x', j, trace, values, moved)``, with
    ``moved`` whether a chain ever saw a non-zero gradient (True for the evolution strategy).
    """
    if method == "gradient":
        opt = _default_optimizer(space, steps) if optimizer is None else optimizer
        chain = _gradient_chain(objective, space, opt, steps)
    else:
        chain = _evolution_chain(objective, space, steps, population)
    lam = jnp.asarray(orders)
    n_orders = len(orders)

    @jax.jit
    def run(key_init, per_restart, select_key):
        restarts = per_restart.shape[0] - 1
        params, j, chain_keys, mutation_keys = _initial_state(
            space, key_init, per_restart, n_orders, restarts
        )
        chain_lam = jnp.repeat(lam, restarts)
        final, final_j, trace, moved = jax.vmap(chain)(
            params, j, chain_keys, chain_lam, mutation_keys
        )
        base, a, b = final["base"], final["a"], final["b"]
        vertex = functools.partial(nearest_vertex, space=space)
        variants = (  # in the order of CANDIDATES
            (base, a, b),
            (vertex(base), vertex(a), vertex(b)),
            (jnp.full_like(base, space.low), a, b),
            (jnp.full_like(base, space.high), a, b),
        )
        pairs = [jax.vmap(assemble)(*v, final_j) for v in variants]
        xs = space.snap(jnp.concatenate([x for x, _ in pairs]))
        xs_prime = space.snap(jnp.concatenate([xp for _, xp in pairs]))
        final_j = jnp.concatenate([final_j] * len(variants))

        def at_orders(x, x_prime):
            return jax.vmap(lambda lam_: selection(x, x_prime, select_key, lam_))(lam)

        values = jax.vmap(at_orders)(xs, xs_prime)  # (chains, L)
        return xs, xs_prime, final_j, trace, values, moved

    return run


def select_candidate(values: np.ndarray) -> int:
    """The candidate whose worst order is closest to that order's best candidate.

    ``values[c, l]`` is candidate c's objective at order l on the selection draws; the score of c
    is ``min_l values[c, l] / max_c' values[c', l]`` (one order: the plain argmax).
    """
    values = np.where(np.isfinite(values), values, -np.inf)
    top = values.max(axis=0)
    ratio = np.where(top > 0, values / np.where(top > 0, top, 1.0), values)
    return int(np.argmax(ratio.min(axis=1)))
