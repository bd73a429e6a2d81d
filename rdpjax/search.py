"""Search for the worst adjacent pair of databases, and certify the bound found on fresh draws.

``ε(λ) = sup_{x~x'} D_λ(p_x, p_x')`` is a supremum over adjacent pairs (eq. (6) of Kutta, Askin,
Dunsche, arXiv:2212.04739v3), and a lower bound computed on one hand-picked pair, such as the
pair (21) of the paper, is only as good as that pick. Because the zoo's samplers are pure JAX and
the plug-in estimator is a smooth function of the sample locations, the pair itself can be
optimized:

* **objective** — the plug-in ``D_λ(p̂_x, q̂_{x',τ})`` of eq. (14)–(16) on ``search_n`` draws per
  side, with *common random numbers*: the same PRNG key for x and x' and for every step of one
  restart, so the objective is a deterministic, piecewise smooth function of the pair. Continuous
  outputs are linearly binned on a fixed grid (the binning weights are linear in the sample
  locations, hence differentiable), smoothed by the FFT KDE of eq. (10) at a fixed bandwidth and
  floored by eq. (13); discrete outputs are counted (eq. (9));
* **gradient search** (continuous outputs, reparameterized sampler) — projected gradient ascent
  with any optax transformation (Adam by default) on ``(base, a, b)``: x equals ``base`` with entry
  j set to ``a``, x' the same with entry j set to ``b``, so the pair is adjacent by construction;
  after each update the parameters are projected onto the box ``domain``. Restart r uses entry
  ``j = r mod m``;
* **evolutionary search** (discrete outputs, a finite input domain, or a gradient that vanishes)
  — a vmapped (1+P) evolution strategy: P mutations of the pair per step (entries resampled or
  perturbed, a and b swapped, the entry j moved), the best kept if it improves the objective.

Every order gets its own restarts, and orders and restarts are ``vmap``-ed into one compiled
``lax.scan``. One pair is then chosen for all orders: every final pair and three variants of it
(its nearest vertex of the box; the same differing entry with all other entries at the low end,
or all at the high end, of the domain — for mechanisms monotone in the data these include pairs
like (21)) are evaluated at every order on a *second*, independent set of draws (so noise that
one restart learned to exploit does not decide), and the candidate whose worst order comes
closest to that order's best candidate is kept. Its bounds are **certified** with
:func:`rdpjax.lower_bound` on a *third* set of draws from a key the search never touched: the
pair is a function of data independent of the certification draws, so the certified bound is a
valid lower bound on ``D_λ`` at that pair, hence on ε(λ). With L orders (and both directions, 2L
bounds) each bound is computed at level α/(L·directions) (Bonferroni, docs/methods.md §2.6), so all
reported bounds hold together with probability ≥ 1 − α. Choosing among restarts and variants
needs no correction: the choice never sees the certification draws.

Cost: ``steps × restarts × L`` evaluations of the objective (``× population`` for the evolutionary
search), each O(search_n + g log g) for a grid of g points; ``4 × restarts × L²`` more for the
selection; then one :func:`rdpjax.lower_bound` on ``n`` draws per side.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from rdpjax._precision import float64
from rdpjax._pytree import pytree_dataclass
from rdpjax._validation import check_int, check_orders
from rdpjax.estimator.api import DEFAULTS, lower_bound
from rdpjax.estimator.binning import linear_binning
from rdpjax.estimator.divergence import plugin_divergence
from rdpjax.estimator.grid import KERNEL_RADIUS, Grid, grid_from_range, grid_layout
from rdpjax.estimator.kde import kernel_half_width, scale_estimate, smooth
from rdpjax.estimator.plan import Bound
from rdpjax.estimator.settings import discrete_settings
from rdpjax.mechanisms.base import Mechanism

__all__ = [
    "SearchKeys",
    "SearchResult",
    "SearchSpace",
    "certify",
    "find_pair",
    "search_keys",
    "search_objective",
    "search_space",
]

METHODS = ("auto", "gradient", "evolutionary")
CANDIDATES = ("search", "nearest vertex", "others at low", "others at high")
"""The kinds of candidate pairs made from each restart's final pair (``SearchResult.candidate``)."""
_GRID_CAP = {1: 4096, 2: 128, 3: 32}  # points per axis of the search grid (memory O(cap^d))
_CELLS_PER_BANDWIDTH = 8  # the objective ranks pairs; the certified bound uses the full grid


# ----------------------------------------------------------------------------- search space


@dataclasses.dataclass(frozen=True)
class SearchSpace:
    """The databases searched: ``m`` entries, each in ``[low, high]^row`` (or on ``levels``
    equally spaced values of it); adjacent databases differ in exactly one entry.

    Attributes:
      m: number of entries (individuals).
      low, high: the box each entry lives in.
      levels: ``None`` for the whole interval, or k ≥ 2 for the k values
        ``low + i (high − low)/(k − 1)`` (e.g. 2 for bits, k for k categories).
      row: shape of one entry: ``()`` for scalars, ``(d,)`` for rows in ``[low, high]^d``.
    """

    m: int
    low: float = 0.0
    high: float = 1.0
    levels: int | None = None
    row: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "m", check_int(self.m, "m", 1))  # a Python int from here on
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"domain must be finite with low < high; got {(self.low, self.high)}")
        if self.levels is not None:
            object.__setattr__(self, "levels", check_int(self.levels, "levels", 2))

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of one database."""
        return (self.m, *self.row)

    def snap(self, values: jax.Array) -> jax.Array:
        """Project onto the domain: clip to the box, then round to the nearest level."""
        values = jnp.clip(values, self.low, self.high)
        if self.levels is None:
            return values
        step = self.width / (self.levels - 1)
        return self.low + jnp.round((values - self.low) / step) * step


def search_space(mechanism: Mechanism) -> SearchSpace:
    """The natural search space of a zoo mechanism (its input domain and number of entries).

    * paper 000's mechanisms: ``[0, 1]^m`` with m (and rows) from the reference pair (21);
      randomized response and shuffled RR on ``{0, 1}^m``;
    * one-individual (local) mechanisms of 001 and 003: m = 1, the location or point domain,
      k categories for the k-ary and one-hot randomized response;
    * :func:`rdpjax.mechanisms.from_sampler` mechanisms: ``[0, 1]^10`` like the pair (21).

    Raises:
      ValueError: for Report Noisy Max and the Sparse Vector Technique, whose neighbouring
        inputs (query answers that all move by at most 1) are not "one entry differs".
    """
    from rdpjax import mechanisms as zoo

    if isinstance(mechanism, zoo.ReportNoisyMax | zoo.SparseVector):
        raise ValueError(
            f"{mechanism.name}: its neighbouring inputs are query-answer vectors that may all "
            "move by 1 (ℓ∞ adjacency), not databases differing in one entry; find_pair does "
            "not search that relation."
        )
    if isinstance(mechanism, zoo.KaryRandomizedResponse | zoo.OneHotRandomizedResponse):
        return SearchSpace(m=1, low=0.0, high=float(mechanism.k - 1), levels=int(mechanism.k))
    if isinstance(mechanism, zoo.TruncatedLaplace | zoo.TruncatedGaussian):
        return SearchSpace(m=1, low=float(mechanism.low), high=float(mechanism.high))
    if isinstance(mechanism, zoo.LaplaceHistogram | zoo.OrthogonalSeries):
        return SearchSpace(m=1)
    x = np.asarray(mechanism.reference_pair()[0])
    if x.ndim == 0:
        return SearchSpace(m=1)
    levels = (
        2
        if isinstance(mechanism, zoo.RandomizedResponse | zoo.ShuffledRandomizedResponse)
        else None
    )
    return SearchSpace(m=int(x.shape[0]), levels=levels, row=tuple(int(s) for s in x.shape[1:]))


def _assemble(base, a, b, j):
    """``x = base`` with entry j set to a, ``x' = base`` with entry j set to b: adjacent."""
    return base.at[j].set(a), base.at[j].set(b)


# ----------------------------------------------------------------------------- keys


class SearchKeys:
    """The four independent keys of :func:`find_pair`, ``jax.random.split(key, 4)``.

    Attributes:
      init: initial pairs of the restarts (uniform on the domain).
      search: the search draws; restart r (of R) uses ``jax.random.split(search, R + 1)[r]`` for
        x and x' alike (common random numbers) at every order and step, and the grid pilot draws
        with the same keys; ``[R]`` gives the mutation keys of the evolutionary search.
      select: the ``select_n`` draws per side that pick the pair among the candidates (the same
        key for every candidate).
      certify: the certification draws, never used by the search: x is drawn with
        ``jax.random.split(certify)[0]`` and x' with ``[1]`` (:func:`certify`).
    """

    def __init__(self, key: jax.Array):
        self.init, self.search, self.select, self.certify = jax.random.split(key, 4)


def search_keys(key: jax.Array) -> SearchKeys:
    """Split ``key`` as :func:`find_pair` does (see :class:`SearchKeys`)."""
    return SearchKeys(key)


# ----------------------------------------------------------------------------- objective


@dataclasses.dataclass(frozen=True)
class _Objective:
    """The plug-in ``D_λ(p̂_x ‖ q̂_{x',τ})`` on fixed-size draws; static layout fixed by a pilot."""

    mechanism: Mechanism
    n: int
    discrete: bool
    encode: Callable | None
    size: int  # discrete: alphabet size
    grid: Grid | None
    bandwidth: jax.Array | None
    half_width: tuple[int, ...]
    floor: float
    beta: float

    def density(self, samples):
        """Grid density (eq. (10), linear binning then FFT) or relative frequencies (eq. (9))."""
        if self.discrete:
            codes = self.encode(samples)
            return jnp.zeros(self.size).at[codes].add(1.0, mode="drop") / self.n  # Eq. (9)
        counts, _ = linear_binning(samples.reshape(self.n, -1), self.grid)
        # Eq. (10) on the grid. Normalized by n, not by the binned mass, so that a sample that
        # leaves the grid only removes its own mass (the pilot makes that rare).
        dens = smooth(counts, self.grid, self.bandwidth, self.half_width)
        return jnp.maximum(dens / (self.n * self.grid.cell_volume), 0.0)

    def __call__(self, x, x_prime, key, lam):
        p = self.mechanism.sample(key, x, self.n)
        q = self.mechanism.sample(key, x_prime, self.n)  # common random numbers
        fp, fq = self.density(p), self.density(q)
        cell = 1.0 if self.discrete else self.grid.cell_volume
        return plugin_divergence(fp, fq, lam, self.floor, self.beta, cell)  # Eq. (14)


def _build_objective(mechanism, space: SearchSpace, keys, n: int) -> _Objective:
    """Fix the grid (or alphabet), bandwidth and floor from pilot draws (host-side).

    The pilot draws every restart's search key at the two corner databases (all entries at
    ``low``, all at ``high``) and at the middle one, so the grid holds the search draws of
    monotone mechanisms; a margin of 10% of the range plus the kernel holds the rest (a sample
    off the grid only loses its own mass in the objective).
    """
    ends = jnp.asarray([space.low, space.high, 0.5 * (space.low + space.high)], jnp.float64)
    databases = space.snap(
        jnp.broadcast_to(ends.reshape(3, *[1] * len(space.shape)), (3, *space.shape))
    )
    spec = mechanism.output(databases[0])

    def draw(key, x):
        return mechanism.sample(key, x, n)

    samples = jax.jit(jax.vmap(jax.vmap(draw, (None, 0)), (0, None)))(keys, databases)
    samples = np.asarray(samples)  # (R, databases, n[, d])
    if spec.is_discrete:
        codes = np.asarray(jax.vmap(jax.vmap(spec.encode))(jnp.asarray(samples)))
        size = spec.alphabet_size or int(codes.max()) + 1
        floor = float(discrete_settings(n, None, None, DEFAULTS)[0])  # the bound's rule
        return _Objective(mechanism, n, True, spec.encode, size, None, None, (), floor, 1.0 / floor)
    d = 1 if samples.ndim == 3 else samples.shape[-1]
    if d > 3:
        raise ValueError(
            f"{mechanism.name} has {d}-dimensional outputs; the KDE objective and "
            "rdpjax.lower_bound take d ≤ 3."
        )
    flat = samples.reshape(-1, d)
    corners = samples[:, :2].reshape(samples.shape[0], 2, n, d)
    scale = 0.5 * (
        scale_estimate(corners[:, 0].reshape(-1, d)) + scale_estimate(corners[:, 1].reshape(-1, d))
    )
    if np.any(scale <= 0):
        raise ValueError(f"{mechanism.name}: the outputs have no spread; nothing to estimate.")
    bandwidth = scale * n ** (-DEFAULTS.bandwidth_exponent(d))  # the bound's default rule
    lo, hi = flat.min(0), flat.max(0)
    margin = 0.1 * (hi - lo) + 2.0 * bandwidth
    lo, hi = lo - margin, hi + margin
    shape, pad = grid_layout(lo, hi, bandwidth, cells_per_bandwidth=_CELLS_PER_BANDWIDTH)
    if max(shape) > _GRID_CAP[d]:
        shape, pad = grid_layout(lo, hi, bandwidth, grid_size=_GRID_CAP[d])
    grid = grid_from_range(jnp.asarray(lo), jnp.asarray(hi), shape, pad)
    half_width = kernel_half_width(bandwidth, np.asarray(grid.spacing), KERNEL_RADIUS)
    half_width = tuple(min(w, p) for w, p in zip(half_width, pad, strict=True))
    peak = (2 * math.pi) ** (-(d - 1) / 2)
    floor = DEFAULTS.floor_factor * n ** (-DEFAULTS.floor_exponent) * peak / float(np.prod(scale))
    return _Objective(
        mechanism, n, False, None, 0, grid, jnp.asarray(bandwidth), half_width, floor, 1.0 / floor
    )


def search_objective(
    mechanism: Mechanism, lam: float, *, key: jax.Array, n: int = 4096, space=None
) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """The search objective of :func:`find_pair` as a function ``(x, x') ↦ D̂_λ``.

    The plug-in ``D_λ(p̂_x ‖ q̂_{x',τ})`` on ``n`` draws per side from ``key`` (the same key for x
    and x': common random numbers), with the grid, bandwidth and floor fixed by a pilot at the
    corners of ``space``. Deterministic and, for continuous outputs of a reparameterized
    sampler, differentiable in x and x'. Build and call it inside ``rdpjax.float64()``.

    Args:
      mechanism: the mechanism.
      lam: the order λ > 1.
      key: the PRNG key of the draws.
      n: draws per side (static).
      space: a :class:`SearchSpace`; default :func:`search_space`.
    """
    space = search_space(mechanism) if space is None else space
    check_int(n, "n", 2)
    objective = _build_objective(mechanism, space, key[None], n)
    lam = float(check_orders(lam)[0])
    return lambda x, x_prime: objective(x, x_prime, key, lam)


# ----------------------------------------------------------------------------- the searches


def _default_optimizer(space: SearchSpace, steps: int):
    """Adam with a cosine-decayed step of 5% of the domain width (to 0.25% at the end)."""
    schedule = optax.cosine_decay_schedule(0.05 * space.width, steps, alpha=0.05)
    return optax.adam(schedule)


def _gradient_chain(objective, space, optimizer, steps):
    """Projected gradient ascent of one restart: returns the best parameters evaluated (the
    last update is not), the objective before each step, and whether a gradient was non-zero."""

    def run(params, j, key, lam, _unused_key):
        def value(p):
            x, x_prime = _assemble(p["base"], p["a"], p["b"], j)
            return objective(x, x_prime, key, lam)

        def step(carry, _):
            params, state, best, best_value, moved = carry
            val, grad = jax.value_and_grad(value)(params)
            grad = jax.tree.map(lambda g: jnp.where(jnp.isfinite(g), -g, 0.0), grad)  # ascent
            moved = moved | jnp.any(jnp.stack([jnp.any(g != 0) for g in jax.tree.leaves(grad)]))
            better = val > best_value
            best = jax.tree.map(lambda new, old: jnp.where(better, new, old), params, best)
            best_value = jnp.maximum(val, best_value)
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
    """One proposal of the evolutionary search: resample or perturb a few entries of the base
    and each of a, b; sometimes swap a and b (the reverse direction) or move the entry j.

    All its randomness comes from one uniform draw (one PRNG hash to compile, not fifteen).
    """
    base, a, b, j = state
    entries = jnp.concatenate([base, a[None], b[None]])  # (m + 2, *row)
    u = jax.random.uniform(key, (4 * entries.size + 3,), minval=1e-12, maxval=1.0 - 1e-12)
    u_on, u_fresh, u_value, u_step = u[: 4 * entries.size].reshape(4, *entries.shape)
    prob = jnp.concatenate([jnp.full(space.m, min(1.0, 2.0 / space.m)), jnp.full(2, 0.5)])
    on = u_on < prob.reshape(-1, *([1] * len(space.row)))
    fresh_value = _from_uniform(u_value, space)
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
    """A (1+P) evolution strategy on common random numbers; the mutation scale decays
    geometrically from 30% to 3% of the domain width."""

    def run(params, j, key, lam, key_mutate):
        def value(state):
            x, x_prime = _assemble(*state)
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


# ----------------------------------------------------------------------------- certification


def certify(
    mechanism: Mechanism,
    x,
    x_prime,
    lam,
    *,
    key: jax.Array,
    n: int,
    alpha: float = 0.05,
    family_size: int | None = None,
    both_directions: bool = False,
) -> Bound:
    """Lower bounds on ``D_λ(law A(x) ‖ law A(x'))`` from ``n`` fresh draws per side.

    Draws x with ``jax.random.split(key)[0]`` and x' with ``[1]``, applies the canonical encoding
    of discrete outputs, and calls :func:`rdpjax.lower_bound`. Every bound is computed at level
    ``alpha / family_size`` (Bonferroni), where ``family_size`` counts *all* bounds of the report
    this call is part of (default: the ``len(lam) × directions`` bounds of this call).

    Args:
      mechanism: the mechanism.
      x, x_prime: the databases (concrete arrays).
      lam: one order or several.
      key: a PRNG key that nothing else used.
      n: draws per side.
      alpha: family-wise error level in (0, 0.5).
      family_size: number of bounds in the whole report, at least ``len(lam) × directions``.
      both_directions: also bound ``D_λ(Q‖P)`` and keep the larger bound per λ.

    Returns:
      The :class:`rdpjax.Bound`; its ``level`` is ``alpha / family_size``.
    """
    orders = check_orders(lam)
    check_int(n, "n", 2)
    own = orders.size * (2 if both_directions else 1)
    family = own if family_size is None else family_size
    check_int(family, "family_size", own)
    kp, kq = jax.random.split(key)
    with float64():
        x, x_prime = jnp.asarray(x), jnp.asarray(x_prime)
        p = mechanism.sample(kp, x, n)
        q = mechanism.sample(kq, x_prime, n)
        spec = mechanism.output(x)
        if spec.is_discrete:
            p, q = spec.encode(p), mechanism.output(x_prime).encode(q)
        p, q = np.asarray(p), np.asarray(q)
    return lower_bound(
        p,
        q,
        orders,
        alpha=alpha * own / family,  # each of the `own` bounds at level alpha / family
        discrete=spec.is_discrete,
        both_directions=both_directions,
    )


# ----------------------------------------------------------------------------- result


@pytree_dataclass(
    static=(
        "method",
        "reason",
        "candidate",
        "n",
        "search_n",
        "select_n",
        "steps",
        "restarts",
        "both_directions",
        "name",
    )
)
class SearchResult:
    """The pair found and its certified bounds. A pytree of numpy arrays.

    Attributes:
      lam: ``(L,)`` orders.
      x, x_prime: ``(m,)`` or ``(m, d)``: the pair found (adjacent: one entry differs).
      index: the entry in which they differ.
      lower: ``(L,)`` certified lower bounds on ε(λ) (fresh draws; simultaneous at 1 − alpha).
      estimate, std_error, bias: ``(L,)`` of the certified :class:`rdpjax.Bound`.
      direction: ``(L,)`` 0 for ``D_λ(p_x‖p_x')``, 1 where the reverse bound was larger
        (``both_directions`` only).
      level: the level of each single bound, ``alpha / (L · directions)``.
      alpha: the family-wise error level.
      search_value: ``(L,)`` objective at the pair found, on the selection draws.
      trace: ``(L, restarts, steps)`` objective per step of every restart (search draws).
      method: ``"gradient"`` or ``"evolutionary"``.
      reason: why that method was used.
      candidate: which candidate made from a restart's final pair was chosen (one of
        :data:`CANDIDATES`: the pair itself, its nearest vertex of the box, or the pair with
        all other entries at the low or the high end of the domain).
      n, search_n, select_n: certification, search and selection draws per side.
      steps, restarts: of the search.
      both_directions: whether both directions were certified.
      name: the mechanism's name.
    """

    lam: np.ndarray
    x: np.ndarray
    x_prime: np.ndarray
    index: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    bias: np.ndarray
    direction: np.ndarray
    level: np.ndarray
    alpha: np.ndarray
    search_value: np.ndarray
    trace: np.ndarray
    method: str
    reason: str
    candidate: str
    n: int
    search_n: int
    select_n: int
    steps: int
    restarts: int
    both_directions: bool
    name: str

    def to_dict(self) -> dict:
        """Plain Python values (JSON-ready), same field names."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = np.asarray(v).tolist() if isinstance(v, np.ndarray) else v
        return out

    def __str__(self) -> str:
        lines = [
            f"pair search for {self.name}: {self.method} search ({self.reason}); "
            f"{self.restarts} restarts × {self.steps} steps, {self.search_n:,} draws per side; "
            f"chosen candidate: {self.candidate}"
        ]
        j = int(self.index)
        rest = np.delete(np.asarray(self.x), j, axis=0)
        lines.append(
            f"pair: entry {j} is {_fmt(self.x[j])} in x and {_fmt(self.x_prime[j])} in x'; "
            f"the other entries {_fmt(rest)}"
        )
        lines.append(f"{'lambda':>8} {'lower':>10} {'estimate':>10} {'std_error':>10}")
        for i, lam in enumerate(self.lam):
            arrow = "  D(x'||x)" if int(self.direction[i]) else ""
            lines.append(
                f"{lam:8g} {self.lower[i]:10.6f} {self.estimate[i]:10.6f} "
                f"{self.std_error[i]:10.6f}{arrow}"
            )
        conf = f"{1 - float(self.alpha):.3g}"
        k = len(self.lam) * (2 if self.both_directions else 1)
        lines.append(
            f"certified on {self.n:,} fresh draws per side: simultaneous {conf} "
            f"(Bonferroni over {k} bound{'s' if k > 1 else ''}, each at {float(self.level):.4g})"
        )
        return "\n".join(lines)


def _fmt(values) -> str:
    arr = np.round(np.asarray(values, np.float64), 3)
    if arr.size == 0:
        return "—"
    if arr.ndim == 0:
        return f"{float(arr):g}"
    return np.array2string(arr, separator=", ", threshold=12)


# ----------------------------------------------------------------------------- validation


def _resolve_space(mechanism, space, m, domain, levels) -> SearchSpace:
    space = search_space(mechanism) if space is None else space
    if domain is not None:
        try:
            low, high = (float(v) for v in domain)
        except (TypeError, ValueError) as err:
            raise ValueError(f"domain must be a pair (low, high); got {domain!r}") from err
        space = dataclasses.replace(space, low=low, high=high)
    if m is not None:
        space = dataclasses.replace(space, m=m)
    if levels is not None:
        space = dataclasses.replace(space, levels=levels)
    return dataclasses.replace(space)  # re-validate


# ----------------------------------------------------------------------------- find_pair


def find_pair(
    mechanism: Mechanism,
    lam: float | Sequence[float],
    *,
    key: jax.Array,
    m: int | None = None,
    domain: tuple[float, float] | None = None,
    levels: int | None = None,
    space: SearchSpace | None = None,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 100,
    restarts: int = 8,
    n: int = 100_000,
    search_n: int | None = None,
    select_n: int | None = None,
    population: int = 8,
    alpha: float = 0.05,
    both_directions: bool = False,
    method: str = "auto",
) -> SearchResult:
    """Search the adjacent pair with the largest estimated ``D_λ``, then certify its bound.

    For each order, ``restarts`` searches (vmapped) maximize the plug-in estimate on common
    random numbers (see the module docstring), one pair is picked for all orders on independent
    selection draws (among the restarts' final pairs and their variants, :data:`CANDIDATES`),
    and it is certified with :func:`rdpjax.lower_bound` on ``n`` fresh draws per
    side from a key the search never used, at level ``alpha / (L · directions)``.

    Args:
      mechanism: a mechanism of :mod:`rdpjax.mechanisms` (or :func:`~rdpjax.mechanisms.
        from_sampler`) taking databases of shape ``(m,)`` or ``(m, d)``.
      lam: one order λ > 1 or several; each gets its own restarts, one pair is certified.
      key: PRNG key; split as :class:`SearchKeys` describes.
      m: number of entries; default from :func:`search_space` (10 for paper 000).
      domain: ``(low, high)`` of every entry; default from :func:`search_space` ((0, 1)).
      levels: restrict entries to this many equally spaced values (2: bits).
      space: a whole :class:`SearchSpace` (e.g. rows in ``[0, 1]^d``: ``row=(d,)``) instead of
        :func:`search_space`'s; ``m``, ``domain`` and ``levels`` still override it.
      optimizer: any optax transformation for the gradient search; default Adam with a
        cosine-decayed step of 5% of the domain width. Its updates are followed by the
        projection onto the domain (``optax.projections.projection_box``).
      steps: search steps per restart (static).
      restarts: independent restarts per order (vmapped; restart r of the gradient search
        changes entry ``r mod m``).
      n: certification draws per side.
      search_n: draws per side of the search objective; default ``min(n, 4096)``.
      select_n: draws per side of the selection among candidates (the same draws for every
        candidate); default ``min(n, 4 · search_n)``.
      population: proposals per step of the evolutionary search.
      alpha: family-wise error level in (0, 0.5) of all reported bounds.
      both_directions: certify ``D_λ`` in both directions of the pair found and keep the larger
        (2L bounds). The search already covers both orders of a pair (x and x' are both free).
      method: ``"auto"``, ``"gradient"`` or ``"evolutionary"``. Auto uses the gradient for
        continuous outputs of a continuous domain when the gradient at the start is finite and
        non-zero, the evolutionary search otherwise; the result says which and why.

    Returns:
      A :class:`SearchResult`.

    Raises:
      ValueError: on invalid arguments, a mechanism whose adjacency is not "one entry differs"
        (:func:`search_space`), ``method="gradient"`` with discrete outputs, or anything
        :func:`rdpjax.lower_bound` rejects.

    Example:
      >>> import jax, rdpjax
      >>> from rdpjax.search import find_pair
      >>> mech = rdpjax.mechanisms.Gaussian(5.0)
      >>> res = find_pair(mech, 2.0, key=jax.random.key(0), steps=20, restarts=2, n=20_000)
      >>> res.method
      'gradient'
    """
    orders = check_orders(lam)
    for name, value, least in (
        ("steps", steps, 1),
        ("restarts", restarts, 1),
        ("n", n, 2),
        ("population", population, 1),
    ):
        check_int(value, name, least)
    search_n = min(n, 4096) if search_n is None else search_n
    check_int(search_n, "search_n", 2)
    select_n = min(n, 4 * search_n) if select_n is None else select_n
    check_int(select_n, "select_n", 2)
    if not 0 < float(alpha) < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5); got {alpha!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    space = _resolve_space(mechanism, space, m, domain, levels)
    keys = search_keys(key)
    n_orders = orders.size

    with float64():
        discrete = mechanism.output(jnp.full(space.shape, space.snap(space.low))).is_discrete
        chosen, reason = _choose_method(method, discrete, space)
        per_restart = jax.random.split(keys.search, restarts + 1)
        objective = _build_objective(mechanism, space, per_restart[:restarts], search_n)
        selection = _build_objective(mechanism, space, per_restart[:restarts], select_n)
        inputs = (keys.init, per_restart, keys.select)
        run = _search_fn(chosen, objective, selection, space, orders, steps, population, optimizer)
        xs, xs_prime, final_j, trace, values, moved = jax.device_get(run(*inputs))
        if chosen == "gradient" and method == "auto" and not np.any(moved):
            chosen = "evolutionary"
            reason = "the autodiff gradient was zero throughout (non-differentiable sampler)"
            run = _search_fn(
                chosen, objective, selection, space, orders, steps, population, optimizer
            )
            xs, xs_prime, final_j, trace, values, moved = jax.device_get(run(*inputs))
        trace = np.asarray(trace).reshape(n_orders, restarts, steps)

    identical = np.all(xs == xs_prime, axis=tuple(range(1, xs.ndim)))
    best = _select(np.where(identical[:, None] & ~np.all(identical), -np.inf, values))
    candidate = CANDIDATES[best // (n_orders * restarts)]
    bound = certify(
        mechanism,
        xs[best],
        xs_prime[best],
        orders,
        key=keys.certify,
        n=n,
        alpha=alpha,
        both_directions=both_directions,
    )
    return SearchResult(
        lam=orders,
        x=xs[best],
        x_prime=xs_prime[best],
        index=np.asarray(final_j[best], np.int64),
        lower=np.asarray(bound.lower),
        estimate=np.asarray(bound.estimate),
        std_error=np.asarray(bound.std_error),
        bias=np.asarray(bound.bias),
        direction=np.asarray(bound.direction),
        level=np.asarray(bound.level),
        alpha=np.asarray(float(alpha)),
        search_value=values[best],
        trace=trace,
        method=chosen,
        reason=reason,
        candidate=candidate,
        n=int(n),
        search_n=int(search_n),
        select_n=int(select_n),
        steps=int(steps),
        restarts=int(restarts),
        both_directions=bool(both_directions),
        name=mechanism.name,
    )


def _select(values: np.ndarray) -> int:
    """The candidate whose worst order is closest to that order's best candidate.

    ``values[c, l]`` is candidate c's objective at order l on the selection draws; the score of c
    is ``min_l values[c, l] / max_c' values[c', l]`` (one order: the plain argmax).
    """
    values = np.where(np.isfinite(values), values, -np.inf)
    top = values.max(axis=0)
    ratio = np.where(top > 0, values / np.where(top > 0, top, 1.0), values)
    return int(np.argmax(ratio.min(axis=1)))


def _choose_method(method, discrete: bool, space):
    """The search to run and why (see :func:`find_pair`); a gradient that turns out to be zero
    throughout sends ``"auto"`` to the evolutionary search afterwards."""
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


def _from_uniform(u, space: SearchSpace):
    """Map uniforms on (0, 1) to uniform values on the domain (or on its levels)."""
    if space.levels is None:
        return space.low + space.width * u
    level = jnp.minimum(jnp.floor(u * space.levels), space.levels - 1)
    return space.low + level * space.width / (space.levels - 1)


def _initial_state(space: SearchSpace, key_init, per_restart, n_orders: int, restarts: int):
    """Inputs of every chain c = order · restarts + restart (traced): uniform initial pairs,
    restart r changing entry ``r mod m``; restart r's search key (shared by the orders); a
    mutation key per chain."""
    chains = n_orders * restarts
    values = _from_uniform(jax.random.uniform(key_init, (chains, space.m + 2, *space.row)), space)
    params = {"base": values[:, : space.m], "a": values[:, space.m], "b": values[:, space.m + 1]}
    j = jnp.tile(jnp.arange(restarts) % space.m, n_orders)
    chain_keys = jnp.concatenate([per_restart[:restarts]] * n_orders)
    mutation_keys = jax.random.split(per_restart[restarts], chains)
    return params, j, chain_keys, mutation_keys


def _nearest_vertex(values, space: SearchSpace):
    """Every entry moved to the nearer end of ``[low, high]``."""
    return space.low + space.width * jnp.round((values - space.low) / space.width)


def _search_fn(method, objective, selection, space, orders, steps, population, optimizer):
    """One compiled function: every chain's search, then every candidate evaluated at every
    order on the selection draws. Each chain's final pair gives four candidates (see
    :data:`CANDIDATES`): itself, its nearest vertex of the box, and the same differing entry
    with all other entries at ``low`` or at ``high`` (extreme pairs are often the worst; the
    selection draws decide). Returns ``(x, x', j, trace, values, moved)``, with ``moved``
    whether a chain ever saw a non-zero gradient (True for the evolution strategy)."""
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
        vertex = functools.partial(_nearest_vertex, space=space)
        variants = (  # in the order of CANDIDATES
            (base, a, b),
            (vertex(base), vertex(a), vertex(b)),
            (jnp.full_like(base, space.low), a, b),
            (jnp.full_like(base, space.high), a, b),
        )
        pairs = [jax.vmap(_assemble)(*v, final_j) for v in variants]
        xs = space.snap(jnp.concatenate([x for x, _ in pairs]))
        xs_prime = space.snap(jnp.concatenate([xp for _, xp in pairs]))
        final_j = jnp.concatenate([final_j] * len(variants))

        def at_orders(x, x_prime):
            return jax.vmap(lambda lam_: selection(x, x_prime, select_key, lam_))(lam)

        values = jax.vmap(at_orders)(xs, xs_prime)  # (chains, L)
        return xs, xs_prime, final_j, trace, values, moved

    return run
