"""An anytime-valid sequential test of ε-DP, (ε, δ)-DP and μ-GDP claims by betting on sets.

Outputs are drawn in pairs, ``X_i ~ P`` (on x) and ``Y_i ~ Q`` (on x'). A claim of a kind in
:data:`~rdpjax.claims.SET_KINDS` bounds ``P(S) − e^ε Q(S) ≤ δ(ε)`` for every set S and every
ε ≥ 0, with δ(ε) its hockey-stick curve (:func:`~rdpjax.claims.hockey_stick`; Dong, Roth, Su,
arXiv:1905.02383v3, Prop. 2.12), and the same with P and Q swapped (x and x' are neighbours of
each other). So for S, ε fixed before pair i is seen (predictable),

    Z_i = 1_S(A_i) − e^ε 1_S(B_i) − δ(ε) ∈ [−e^ε − δ, 1],   (A, B) = (X, Y) or (Y, X),

has conditional mean ≤ 0 under the claim, and the wealth ``K_t = Π_{i ≤ t} (1 + λ_i Z_i)``,
with a predictable bet ``λ_i ∈ [0, c/(e^ε + δ)]``, c < 1, is a nonnegative supermartingale with
``K_0 = 1`` (each factor is ≥ 1 − c > 0 and has conditional mean ``1 + λ_i E[Z_i | past] ≤
1``). This is the capital process of Waudby-Smith & Ramdas, "Estimating means of bounded
random variables by betting" (arXiv:2010.09686, §3, with the mean tested ≤ 0 rather than = m,
whence a supermartingale), and of the two-sample tests by betting of Shekhar & Ramdas,
"Nonparametric two-sample testing by betting" (arXiv:2112.09162, §2), whose payoff is a
witness function evaluated on a pair, as 1_S is here. By Ville's inequality
``P(∃t: K_t ≥ 1/α) ≤ α`` under the claim, so refuting as soon as ``K_t ≥ 1/α`` is a level-α
test whatever the stopping rule: the user may watch every pair and stop at will.

**Any order.** The argument above takes the pairs in an order that does not depend on their
values. A sampler is called for i.i.d. outputs: the ``m`` outputs of one call are, as a
multiset, ``m`` i.i.d. draws, independent of other calls, but it may return them in any order
(sorted, or a discrete law written as ``np.repeat(values, rng.multinomial(m, p))``). The bet is
fixed for a batch while the wealth is watched after every pair, so a batch returned sorted
brings its large payoffs together (and pairs the i-th smallest X with the i-th smallest Y): the
running maximum of the wealth, which Ville's inequality is about, then depends on the values,
and true, tight claims were refuted 9–15% of the time at α = 0.05 (issue 51). So each batch of
each side is put in a uniformly random order, independent of the outputs and of the other side,
before its multipliers are computed: it is sorted, then permuted by a permutation from its own
numpy Generator, seeded from ``fold_in(key, ORDER_TAG)`` (:func:`order_generator`), one per
batch and side, in drawing order. Sorting first makes the result depend on a call's outputs only
through their multiset: any order the sampler returns gives the very same test (O(m log m) a
batch, m ≤ ``batch``). This restores the i.i.d. sequence: if a call returns ``σ(X_1, …, X_m)``,
with X i.i.d. and σ any rearrangement (which may depend on the values), and τ is a uniform
permutation independent of both, then given X, ``τ∘σ`` is again uniform and independent of X,
and an i.i.d. (exchangeable) vector permuted by an independent uniform permutation has the law
of X itself. The two sides' permutations are independent, so the pairs are i.i.d. pairs of
independent X and Y, as above. The bets are unchanged: they depend on the past only through its
pooled order statistics and counts (:mod:`rdpjax.rejection.bets`). The alternative, watching the
wealth only at batch ends, needs the random pairing all the same (the product over a batch
depends on which X meets which Y) and can only stop later on the same pairs;
``benchmarks/calibration/order.py`` measures both.

**Hedging.** A convex combination of test supermartingales on the same filtration is one, so
the test runs several betting strategies side by side, each with wealth 1 at the start, and
watches their mean (the "hedged" capital process of Waudby-Smith & Ramdas, §4, there over the
two signs of the bet; here over how boldly to bet): no α is split, and the best strategy is
diluted by at most ``log J`` of log wealth. The strategies (:data:`SCALES`) bet 0.75 and 0.375
of the aGRAPA fraction; each picks its set, direction and ε as in
:mod:`rdpjax.rejection.bets`, before each batch, from the pairs before the batch.

**Cost.** Batches of 2, 2, …, then ⌈n/8⌉ pairs after n, at most ``batch``; each batch costs
O(b log b) (its random order and multipliers). The bets are planned again (:func:`plans_at`)
at the start of every batch while the batches grow by 1/8, then whenever the pairs seen have
grown by 1/8 since the last plan: about ``8·log(max_n / 16)`` plans (a plan is any function of
the past, so when it is made does not touch validity). Real outputs are kept sorted between
plans (:class:`~rdpjax.rejection.bets.SortedPast`): each batch is sorted once, for its random
order, and that sorted copy is merged in linearly at the next plan (sorted again with the others
where several batches came since the last plan; O(n) merges in all, the plans' sizes growing
geometrically; ``benchmarks/performance/betting_speed.py``). :func:`rdpjax.audit` bets with
batches of up to 10⁶. Outputs must be one-dimensional (``project=`` maps vectors to one number
first).

**Driver.** :func:`betting_test` is the looks driver (:func:`rdpjax.stream.looks.run_looks`)
over :func:`wealth_accumulator`: its batches end at :func:`batch_ends`, every end is a look (the
wealth is watched at every pair of the batch, the look reads the decision), and the outputs come
from :class:`rdpjax.stream.batches.BlackBoxBatches`, the draws of a sequential Rényi audit's
black box; its state (:mod:`rdpjax.rejection.betting_state`) is checkpointed as theirs is.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from rdpjax._keys import as_key
from rdpjax._validation import check_int, check_level
from rdpjax.claims import SET_KINDS, Claim
from rdpjax.rejection.bets import Bets, SortedPast, epsilon_grid, plan_bets
from rdpjax.rejection.betting_result import BettingResult, describe
from rdpjax.rejection.betting_state import BettingState, Checkpoint, Kept, Wealth, replanned
from rdpjax.rejection.wealth import Multipliers, first_crossing
from rdpjax.rejection.wealth import hedged as _hedged
from rdpjax.stream.batches import BlackBoxBatches, generators
from rdpjax.stream.looks import Accumulator, run_looks

__all__ = [
    "BettingState",
    "Checkpoint",
    "ORDER_TAG",
    "SCALES",
    "BettingResult",
    "batch_ends",
    "log_wealth_paths",
    "order_generator",
    "betting_test",
    "wealth_accumulator",
]

SCALES = (0.75, 0.375)
"""The hedged strategies: the fraction of the aGRAPA bet each one stakes."""
FIRST = 2
"""Pairs drawn before the first bet (nothing is known before them)."""
ORDER_TAG = 0x0D3E
"""Folded into the test's key for the generator of the within-batch permutations."""


def order_generator(key) -> np.random.Generator:
    """The generator of the within-batch permutations (module docstring, "Any order").

    ``generators(fold_in(key, ORDER_TAG))[0]``: independent of the generators the outputs are
    drawn with (:func:`rdpjax.stream.batches.generators` of ``key`` itself).
    """
    return generators(jax.random.fold_in(as_key(key), ORDER_TAG))[0]


def _shuffled(rng: np.random.Generator, batch: np.ndarray) -> np.ndarray:
    """Each row of a ``(R, b)`` batch sorted, then put in its own uniformly random order."""
    return rng.permuted(np.sort(batch, axis=1), axis=1)


def batch_ends(max_n: int, batch: int) -> list[int]:
    """Pairs seen at the end of each batch: 2, 4, …, 16, then +⌈n/8⌉ (at most ``batch``)."""
    ends, n = [], FIRST
    while n < max_n:
        ends.append(n)
        n += min(batch, max(FIRST, -(-n // 8)))
    ends.append(max_n)
    return ends


def plans_at(ends: list[int]) -> set[int]:
    """The batch starts where the bets are planned again (module docstring, "Cost").

    Every start of a batch while batches grow the pairs by 1/8 (2, 4, …, 16, then ⌈n/8⌉ more:
    until the ``batch`` cap binds); then the first start once the pairs seen have grown by 1/8
    since the last plan.
    """
    out, last = set(), 0
    for start in [0, *ends[:-1]]:
        if start >= FIRST and (not out or start >= last + max(FIRST, -(-last // 8))):
            out.add(start)
            last = start
    return out


def _advance(
    logk: np.ndarray,
    bets: list[Bets],
    bx: np.ndarray,
    by: np.ndarray,
    multipliers: Multipliers | None = None,
) -> np.ndarray:
    """Each strategy's log wealth after each pair of a batch, ``(J, R, b)``.

    ``multipliers``: ``Multipliers(bets)`` made before (for the batches of one plan).
    """
    multipliers = Multipliers(bets) if multipliers is None else multipliers
    paths = np.empty((len(bets), *bx.shape))
    for j, steps in enumerate(multipliers(bx, by)):
        np.cumsum(steps, axis=1, out=paths[j])
    paths += logk[:, :, None]
    return paths


def log_wealth_paths(
    key,
    xs: Any,
    ys: Any,
    claim: Claim,
    *,
    alpha: float = 0.05,
    batch: int = 1024,
    every_pair: bool = True,
) -> dict[str, np.ndarray]:
    """The test on ``R`` replications at once, on outputs drawn in advance.

    The outputs are split into the batches of :func:`batch_ends`, as :func:`betting_test`
    draws them, and each batch of each row and side is put in a random order from
    :func:`order_generator` (``key``) before it is bet on (module docstring, "Any order"): the
    result is the same for any order of the outputs within each batch. With ``R = 1`` and the
    same key and ``batch``, it is that of :func:`betting_test` on the same outputs.

    Args:
        key: a JAX key for the within-batch permutations.
        xs: ``(R, max_n)`` outputs on x (real numbers or integer codes); replication r pairs
            its batches of ``xs[r]`` and ``ys[r]``, each in a random order.
        ys: ``(R, max_n)`` outputs on x', of the same kind.
        claim: a claim of a kind in ``SET_KINDS``.
        alpha: the level; a replication stops at the first pair where the hedged wealth
            reaches ``1/alpha``.
        batch: the largest batch (pairs between two plannings).
        every_pair: watch the wealth after every pair (the test); ``False``: only at batch
            ends, stopping at the first where it is ≥ ``1/alpha`` (``calibration/order.py``).

    Returns:
        dict of ``(R,)`` arrays: ``stop`` (pairs per side at refutation; 0 where not refuted by
        ``max_n``), ``log_wealth`` (hedged log wealth at the stop, or at ``max_n``), ``winner``
        (index into :data:`SCALES` of the richest strategy there).
    """
    claim = _checked(claim, alpha)
    xs, ys = np.asarray(xs), np.asarray(ys)
    if xs.ndim != 2 or xs.shape != ys.shape:
        raise ValueError(f"xs and ys must be (R, max_n) arrays alike; got {xs.shape}, {ys.shape}")
    r, max_n = xs.shape
    discrete = bool(np.issubdtype(xs.dtype, np.integer))
    ends = batch_ends(max_n, check_int(batch, "batch", 1))
    order = order_generator(key)
    xs, ys = xs.copy(), ys.copy()
    start = 0
    for end in ends:  # the permutations in drawing order: batch by batch, x then x'
        xs[:, start:end] = _shuffled(order, xs[:, start:end])
        ys[:, start:end] = _shuffled(order, ys[:, start:end])
        start = end
    eps, delta = epsilon_grid(claim)
    level = np.log(1.0 / alpha)
    logk = np.zeros((len(SCALES), r))
    stop, final, winner = np.zeros(r, np.int64), np.zeros(r), np.zeros(r, np.int64)
    start, plans = 0, plans_at(ends)
    bets: list[Bets] = []
    planned = np.arange(r)  # the rows the bets were planned for (the live rows then)
    for end in ends:
        live = np.flatnonzero(stop == 0)
        if start in plans and live.size:
            past = xs[live, :start], ys[live, :start]
            bets, planned = plan_bets(*past, eps, delta, discrete, SCALES), live
        if start > 0 and live.size:
            new = xs[live, start:end], ys[live, start:end]
            mine = np.searchsorted(planned, live)  # live rows only ever stop
            paths = _advance(logk[:, live], [b.rows(mine) for b in bets], *new)
            if not every_pair:
                paths = paths[:, :, -1:]
            hedged = _hedged(paths)
            crossed = hedged >= level
            hit = crossed.any(axis=1)
            first = np.argmax(crossed, axis=1)[hit]
            rows = live[hit]
            stop[rows] = start + first + 1 if every_pair else end
            final[rows] = hedged[hit, first]
            winner[rows] = np.argmax(paths[:, hit, first], axis=0)
            logk[:, live] = paths[:, :, -1]
        start = end
    rest = stop == 0
    final[rest] = _hedged(logk[:, rest])
    winner[rest] = np.argmax(logk[:, rest], axis=0)
    return {"stop": stop, "log_wealth": final, "winner": winner}


def _checked(claim: Any, alpha: Any) -> Claim:
    if not isinstance(claim, Claim) or claim.kind not in SET_KINDS:
        kind = getattr(claim, "kind", type(claim).__name__)
        raise ValueError(
            f"claim must be a Claim of kind {', '.join(SET_KINDS)} (a set test needs δ(ε)); "
            f"got {kind} ({claim}): zCDP and RDP claims are checked by Rényi bounds"
        )
    check_level(alpha)
    return claim


def _one_dimensional(out: np.ndarray, side: str) -> np.ndarray:
    if out.ndim == 2 and out.shape[1] == 1:
        out = out[:, 0]
    if out.ndim != 1:
        raise ValueError(
            f"sample returned outputs of shape {out.shape[1:]} on {side}; the set test needs "
            "one number per output: pass project=, a fixed map from a batch to shape (m,)"
        )
    return out


def betting_test(
    key,
    sample: Callable[..., Any],
    x: Any,
    x_prime: Any,
    claim: Claim,
    *,
    alpha: float = 0.05,
    max_n: int = 100_000,
    batch: int = 1024,
    project: Callable[..., Any] | None = None,
    checkpoint: Checkpoint | None = None,
) -> BettingResult:
    """Draw pairs from a numpy black box until the claim is refuted (by betting) or ``max_n``.

    Anytime-valid: if the claim is true, the probability that it is ever refuted, at any
    ``max_n``, is ≤ ``alpha`` (Ville's inequality; module docstring), so the caller may also
    stop early or continue with a new call only by starting the wealth afresh at a new α.
    ``sample`` must return i.i.d. outputs in each call, in any order: each batch is bet on in
    a random order drawn from ``key`` (module docstring, "Any order"), and the result is the
    same whatever order the sampler returns each batch in.

    Args:
        key: a JAX key; the numpy Generators of x and x' are spawned from it
            (:func:`rdpjax.stream.batches.generators`), and that of the within-batch
            permutations (:func:`order_generator`).
        sample: the black box ``sample(rng, database, m) -> (m,)`` outputs (real numbers or
            integer codes), as for :class:`rdpjax.stream.sources.NumpySource`.
        x: the first database (P: the law of ``sample``'s outputs on x).
        x_prime: the second, adjacent to x (Q: the law on x').
        claim: a claim of kind ``pure_dp``, ``approx_dp`` or ``gdp``.
        alpha: the level, in (0, 0.5).
        max_n: the most outputs drawn per side (≥ 3).
        batch: the largest number of pairs drawn in one call (the bets are re-planned between
            calls; smaller batches waste fewer draws past the stop).
        project: an optional fixed map from a batch of outputs to shape ``(m,)``.
        checkpoint: a :class:`Checkpoint`: the state is saved after every complete batch, and
            a state it loads is resumed (the result is that of an uninterrupted run with the
            same arguments; :class:`rdpjax.auditing.AuditOptions`' ``checkpoint`` folder).

    Returns:
        :class:`BettingResult`.

    Raises:
        ValueError: for a claim of another kind, alpha outside (0, 0.5), max_n < 3, batch < 1,
            outputs that are not finite real numbers or integer codes (the error names the
            side, x or x'), outputs of more than one number without ``project``, or integer
            outputs on one side and real on the other.

    Example:
        >>> import jax, numpy as np
        >>> from rdpjax.claims import gdp
        >>> def noisy_sum(rng, db, m):
        ...     return np.sum(db) + rng.normal(size=m)
        >>> r = betting_test(jax.random.key(0), noisy_sum, [1.0], [0.0], gdp(0.5))
        >>> r.refuted, r.n < 1000
        (True, True)
    """
    claim = _checked(claim, alpha)
    alpha = float(alpha)
    max_n = check_int(max_n, "max_n", FIRST + 1)
    batch = check_int(batch, "batch", 1)
    if not callable(sample):
        raise ValueError(f"sample must be callable as sample(rng, database, m); got {sample!r}")
    ends = batch_ends(max_n, batch)
    accumulator = wealth_accumulator(key, claim, alpha, ends)
    kept = None
    if checkpoint is not None:
        eps, delta = epsilon_grid(claim)

        kept = Kept(checkpoint, functools.partial(replanned, eps=eps, delta=delta, scales=SCALES))
    source = BlackBoxBatches(sample, x, x_prime, key, project)  # generators(key)[1:]: x, x'
    return run_looks(source, ends, range(len(ends)), accumulator, checkpoint=kept)


@dataclasses.dataclass
class _Cache:
    """What :func:`wealth_accumulator`'s updates keep between batches, to save work only.

    ``order``: the :class:`Wealth` ``order`` state its Generator was left at (``None`` during
    an update); ``multipliers``: the :class:`~rdpjax.rejection.wealth.Multipliers` of the bets
    in force.
    """

    order: dict[str, Any] | None = None
    multipliers: Multipliers | None = None


def wealth_accumulator(key, claim: Claim, alpha: float, ends: list[int]) -> Accumulator:
    """The betting test as an :class:`~rdpjax.stream.looks.Accumulator` over a :class:`Wealth`.

    ``update`` puts each side's batch in a random order (module docstring, "Any order"), plans
    the bets again where :func:`plans_at` says (from the pairs before the batch only), and
    advances each strategy's wealth pair by pair, stopping at the first pair where the hedged
    wealth reaches ``1/alpha`` (Ville's inequality); ``look`` reads that decision; ``result``
    is the :class:`BettingResult` (``max_n = ends[-1]``).
    """
    eps, delta = epsilon_grid(claim)
    level = np.log(1.0 / alpha)
    plans = plans_at(ends)
    order = order_generator(key)  # its state is set from the Wealth at each update
    cache = _Cache()

    def init() -> Wealth:
        state = BettingState(logk=np.zeros((len(SCALES), 1)))
        return Wealth(state, [], SortedPast(), order_generator(key).bit_generator.state)

    def update(wealth: Wealth, bx, by) -> Wealth:
        state, bets, sorted_past = wealth.past, wealth.bets, wealth.sorted_past
        bx, by = _one_dimensional(bx, "x"), _one_dimensional(by, "x'")
        # A random order within the batch, whatever order the sampler returned (docstring), as
        # _shuffled; its sorted copy goes into the sorted past.
        if cache.order is not wealth.order:  # else the generator is at it already
            order.bit_generator.state = wealth.order
        cache.order = None  # until this update is complete
        sx, sy = np.sort(bx[None], axis=1), np.sort(by[None], axis=1)
        bx, by = order.permuted(sx, axis=1)[0], order.permuted(sy, axis=1)[0]
        start, m = state.start, bx.size
        if start == 0:
            discrete = bool(np.issubdtype(bx.dtype, np.integer))
            if discrete != bool(np.issubdtype(by.dtype, np.integer)):
                raise ValueError(
                    f"sample must return the same kind of output on x and x'; got {bx.dtype} "
                    f"on x and {by.dtype} on x'"
                )
            state = state.added(bx, by, start + m, 0.0, discrete=discrete)
        else:
            planned = state.planned
            if start in plans:
                past, presorted = state.arrays(), not state.discrete
                past = sorted_past.update(*past) if presorted else (a[None] for a in past)
                bets = plan_bets(*past, eps, delta, state.discrete, SCALES, rows_sorted=presorted)
                planned = start
            if cache.multipliers is None or cache.multipliers.strategies is not bets:
                cache.multipliers = Multipliers(bets)  # once a plan
            paths = _advance(state.logk, bets, bx[None], by[None], cache.multipliers)
            crossed, hedged = first_crossing(paths, level)
            i = m - 1 if crossed is None else crossed
            state = state.added(bx, by, start + i + 1, hedged, logk=paths[:, :, i],
                                refuted=crossed is not None, planned=planned)  # fmt: skip
        if not state.discrete:
            sorted_past.add(sx[0], sy[0])
        cache.order = order.bit_generator.state
        return Wealth(state, bets, sorted_past, cache.order)

    def look(wealth: Wealth, k: int) -> tuple[Wealth, bool]:
        return wealth, wealth.past.refuted

    def result(wealth: Wealth) -> BettingResult:
        state, bets = wealth.past, wealth.bets
        j = int(np.argmax(state.logk[:, 0]))
        strategy = describe(bets[j], j, SCALES[j]) if bets else {"strategy": None}
        return BettingResult(
            refuted=state.refuted,
            n=state.n if state.refuted else ends[-1],
            drawn=state.size,
            alpha=alpha,
            claim=claim,
            e_value=float(np.exp(_hedged(state.logk)[0])),
            path=tuple(state.path),
            strategy=strategy,
        )

    return Accumulator(init, update, look, result)
