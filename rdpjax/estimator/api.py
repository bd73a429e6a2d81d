"""The lower bound: from two samples to a statistically valid lower bound on ε(λ).

Kutta, Askin, Dunsche, arXiv:2212.04739v3. With ``p`` the law of the mechanism's output on x and
``q`` on an adjacent x', the bound at level 1 − α is eq. (16):

    ℓ̂ = D_λ(p̂, q̂_τ) + Φ⁻¹(α) σ̂ / √n,

valid for ``D_λ(p, q)`` and hence for ``ε(λ) ≥ D_λ(p, q)`` (Theorem 1). rdpjax generalizes
``σ̂/√n`` to ``√(σ̂_p²/n_p + σ̂_q²/n_q)`` for unequal sample sizes (docs/methods.md §2.3).

Several orders and both directions make K bounds. Each is computed at level α/K (Bonferroni,
docs/methods.md §2.6), so *all* of them hold together with probability ≥ 1 − α, and a report that
takes their maximum is valid. The :class:`Bound` records K and the per-bound level.

The pipeline is split in two so that studies can ``vmap`` it: a host-side :func:`plan_bound`
fixes everything that determines array shapes (grid layout, support size) from the data, and the
jittable :meth:`BoundPlan.__call__` computes the bound for any samples of the same sizes. That
call is itself two steps, :meth:`BoundPlan.bin` (samples → :class:`Binned` counts, O(n)) and
:meth:`BoundPlan.bound` (counts → :class:`Bound`, independent of n), so that the streamed
pipeline (:mod:`rdpjax.stream`) can feed counts it accumulated itself, and so that
:func:`lower_bound` compiles the costly second step once per grid layout rather than once per
sample size (``layout="bucketed"`` makes layouts repeat across data sets).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, cast

import jax
import numpy as np
from jax.sharding import Mesh

from rdpjax._internal.programs import (
    PROGRAM_BUDGET,
    keep_program_budget,
    program_key,
    trim_programs,
)
from rdpjax._internal.sharding import draw_mesh  # pyright: ignore[reportUnknownVariableType]  # jax.Device is Unknown to the checker
from rdpjax._keys import key_rng, random_order
from rdpjax._precision import float64
from rdpjax._typing import Array, ArrayLike, typed_jit
from rdpjax._validation import check_level
from rdpjax.estimator.bound_plan import Binned, Bound, BoundPlan
from rdpjax.estimator.device_map import mapped_rest_program
from rdpjax.estimator.from_samples import Planned, plan_samples
from rdpjax.estimator.inputs import check_finite_bound
from rdpjax.estimator.options import BoundOptions, resolve_options
from rdpjax.estimator.orders import DEFAULT_ORDERS
from rdpjax.estimator.settings import DEFAULTS, Defaults, padded_settings

__all__ = [
    "BoundOptions",
    "Defaults",
    "DEFAULTS",
    "Bound",
    "Binned",
    "BoundPlan",
    "plan_bound",
    "lower_bound",
    "PROGRAM_BUDGET",
    "trim_programs",
]


def plan_bound(
    p_samples: ArrayLike,
    q_samples: ArrayLike,
    lam: ArrayLike | Sequence[float],
    *,
    alpha: float = 0.05,
    both_directions: bool = False,
    options: BoundOptions | None = None,
    support_size: int | None = None,
    **fields: Any,
) -> tuple[BoundPlan, Array, Array]:
    """Validate inputs and fix the static layout of a bound computation (host-side).

    Arguments as in :func:`lower_bound` (which describes them in full), plus ``support_size``;
    the options' ``transform`` defaults to ``None`` here.

    Args:
      p_samples: ``(n,)`` or ``(n, d)`` samples of P (outputs on x).
      q_samples: ``(n,)`` or ``(n, d)`` samples of Q (outputs on x'); sizes may differ.
      lam: an order λ > 1 or a sequence of orders.
      alpha: family-wise error level in (0, 0.5).
      both_directions: also bound ``D_λ(Q‖P)``.
      options: the estimator's :class:`~rdpjax.estimator.options.BoundOptions` (default
        ``BoundOptions(transform=None)``).
      support_size: for discrete data already coded as integers in ``[0, support_size)``
        (e.g. a mechanism's full output alphabet), skip the encoding and plan for that support,
        so that the plan fits every replication, not only the pilot's observed values.
      **fields: fields of :class:`~rdpjax.estimator.options.BoundOptions` that replace those of
        ``options`` (``bandwidth=…``, ``layout=…``). On ``layout``: ``"bucketed"`` (default): the
        grid size (about 16 cells per bandwidth over the data range) rounded up to one of four sizes
        per octave and the margin to a multiple of 16 cells, so that bounds on other data or other n
        mostly share one compiled :meth:`BoundPlan.bound`; or ``"exact"``: the size itself. The
        bucketed grid is at most 25% finer, with the coverage and tightness of the exact one
        (measured: ``docs/calibration.md``, section "Evidence moved out of other docstrings").
        Ignored with ``grid_size``. For discrete data the bucketed layout
        pads the observed support with empty cells the same way (the bound is unchanged: an empty
        cell adds nothing to any term); ``support_size`` is kept as given. On ``transform``:
        ``None`` (default) or ``"quantile"`` as in :func:`lower_bound`; the returned samples are
        then the transformed rows that remain after the pilot split. Not ``"auto"``: a plan is
        reused on other draws, whose map must be fixed in advance.

    Returns:
      ``(plan, p, q)``: the :class:`BoundPlan` and the samples in the form it takes (float
      arrays for continuous data, int32 codes for discrete data).
    """
    options = resolve_options(options, fields, caller="plan_bound", base=_PLAN_DEFAULTS)
    if options.transform == "auto":
        raise ValueError(
            "transform='auto' is lower_bound's: a plan is reused on other draws, so pass "
            "transform=None or 'quantile' to plan_bound."
        )
    with float64():  # the planning arithmetic is float64 whatever the caller's jax config
        planned = plan_samples(
            p_samples,
            q_samples,
            lam,
            pad=False,
            alpha=alpha,
            both_directions=both_directions,
            options=options,
            support_size=support_size,
        )
    return planned.plan, planned.p, planned.q


_PLAN_DEFAULTS = BoundOptions(transform=None)
""":func:`plan_bound`'s options when none are given: a plan's map is fixed in advance or absent."""


@typed_jit(static_argnames=("mesh",))
def bin_program(
    plan: BoundPlan,
    p: Array,
    q: Array,
    n_p: int | Array,
    n_q: int | Array,
    settings: tuple[Any, ...] | None,
    span: tuple[Any, ...] | None,
    mesh: Mesh | None = None,
) -> Binned:
    # Sizes traced, samples padded to bucketed lengths: a new n in a seen bucket reuses it.
    return plan.bin_padded(p, q, n_p, n_q, settings, span, mesh)


def binning_mesh() -> Mesh | None:
    """The devices :func:`lower_bound` bins continuous samples on, or ``None``.

    Every local device when there are several (each bins a block, one ``psum`` adds them), else
    ``None`` (the default device). On a CPU, jax has one device unless told more
    (``jax_num_cpu_devices``).
    """
    devices = cast(list[Any], jax.local_devices())  # jax.Device is Unknown to the checker
    return draw_mesh(devices) if len(devices) > 1 else None


@typed_jit()
def bound_program(plan: BoundPlan, binned: Binned) -> Bound:
    # A separate compilation from the binning: it depends on the layout and the orders, not
    # on n, so a new sample size on the same layout reuses it.
    return plan.bound(binned)


def lower_bound(
    p_samples: ArrayLike,
    q_samples: ArrayLike,
    lam: ArrayLike | Sequence[float] | None = None,
    *,
    alpha: float = 0.05,
    both_directions: bool = False,
    options: BoundOptions | None = None,
    key: ArrayLike | None = None,
    **fields: Any,
) -> Bound:
    """A statistical lower bound on ``D_λ(P‖Q)``, hence on ε(λ), from samples of P and Q.

    ``p_samples`` are outputs of the mechanism on a database x, ``q_samples`` on an adjacent x'.
    The bound is eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3 with the densities of
    eq. (9) (discrete) or (10) (continuous, Gaussian KDE on a grid), the softmax floor (13) on
    the denominator and the delta-method standard error (18) (or its autodiff generalization).
    With several local devices (GPUs, or CPU devices set by ``jax_num_cpu_devices``) continuous
    samples are binned split over them (:func:`binning_mesh`).

    Args:
      p_samples: ``(n,)`` or ``(n, d)`` array of outputs on x (d ≤ 3 for continuous data).
      q_samples: the same for the outputs on x'; the sizes of the two may differ.
      lam: an order λ > 1 or a sequence of orders; ``None``: λ = 2, 5, 7
        (:data:`rdpjax.estimator.orders.DEFAULT_ORDERS`). To check a claim, pass the result to
        :func:`rdpjax.claims.check_claim`.
      alpha: family-wise error level in (0, 0.5); every reported bound holds with probability
        ≥ 1 − alpha, simultaneously when there are several (Bonferroni).
      both_directions: also bound ``D_λ(Q‖P)`` and report, per λ, the larger bound.
      options: the estimator's :class:`~rdpjax.estimator.options.BoundOptions` (default
        ``BoundOptions()``).
      key: a ``jax.random`` key: each sample's rows are first put in an order drawn from it
        (sorted, then permuted: :func:`rdpjax._keys.random_order`), so that the bound depends on
        the samples as multisets and on the key alone. ``None`` (default): the rows are read as
        given, and must then come in an order independent of their values, as i.i.d. draws do
        in the order drawn: the pilot split of the quantile map (``transform``) takes every
        16th row, which in a sorted sample is a fixed set of ranks rather than a random
        subsample (a warning says so when a sample is sorted). :func:`rdpjax.audit` orders its
        draws this way itself.
      **fields: fields of :class:`~rdpjax.estimator.options.BoundOptions` that replace those of
        ``options``, by name; any other name is a ``TypeError``. They are:

      discrete: ``True`` for relative frequencies, ``False`` for KDE, ``None`` to decide from
        the data (:func:`rdpjax.estimator.support.looks_discrete`: 1-D outputs with at most 64
        distinct values → frequencies; more values are treated as ordinal, e.g. noisy counts,
        and smoothed by the KDE; pass ``True`` for codes of unordered categories); the result
        records the decision.
      bandwidth: KDE bandwidth in data units (scalar or per axis); default from
        :class:`Defaults`, which the coverage tables measure. Far below it the bound can land
        above the truth (one Laplace shift sample, 20,000 a side, λ = 2: 0.614 at 1/40 of the
        default's h, 0.769 at 1/80, against the exact 0.619; ``docs/methods.md``).
      floor: τ of the softmax floor (a density for continuous data, a probability for discrete).
      beta: β of the softmax floor; default ``1/τ``.
      grid_size: KDE grid points per axis (at most 2^24 over all axes); default about 16 per
        bandwidth over the data range.
      variance: ``"autodiff"`` (the delta method at the actual h, default: the gradient of the
        plug-in by automatic differentiation, or with ``second_order`` its closed form (S3),
        which the tests hold equal to it) or ``"eq18"`` (the paper's formula, its h → 0 limit).
      second_order: subtract the estimated second-order bias of the plug-in and add the
        second-order variance (default; :mod:`rdpjax.estimator.second_order`). Without it the
        bound is the paper's eq. (16), which lands above the truth when P ≈ Q (the first-order error
        vanishes there while the plug-in keeps an upward bias of order support size / n).
      layout: ``"bucketed"`` (default) or ``"exact"`` (:func:`plan_bound`). The bound is
        compiled once per grid layout and the binning once per padded sample size (samples
        are padded with rows that are not binned to at least 2^15 rows, beyond that to one of
        four sizes per octave, :func:`rdpjax.estimator.grid.bucket_size`); bucketed layouts make
        calls on new data or a new n reuse both compiled programs
        (:data:`rdpjax._internal.programs.PROGRAM_BUDGET`).
      transform: ``"quantile"``: continuous outputs are mapped by a quantile map fitted on a
        pilot split (every 16th row, every 8th below 2,048 rows, at most 4,096 a side, set aside and
        not bounded), so that multimodal, spiky and heavy-tailed laws are near-uniform before the
        KDE (:mod:`rdpjax.estimator.transform`). The bound stays valid (the map is fixed before the
        rows it is applied to, and no map raises a Rényi divergence); ``n_p``, ``n_q`` and
        ``bandwidth`` of the result then refer to the remaining rows in the map's units (in (0, 1)).
        ``None``: the KDE of the outputs themselves. ``"auto"`` (default): the map for continuous
        outputs of 1 to 3 axes, at least 1,000 a side, whose pilot rows have, along some axis, tails
        as heavy as a Laplace law's or heavier, or two separated modes, or (up to 2^21 a side)
        Gaussian-like tails (:func:`rdpjax.estimator.transform.auto_transform`; with 2 or 3 axes
        every axis is mapped and the axes are then unmixed), and for nothing else: not for outputs
        with a bounded support on every axis, and not when ``bandwidth``, ``floor``, ``beta`` or
        ``grid_size`` is given (all in data units). Where it maps, the outputs' own KDE is bounded
        too, on all the rows, and the larger bound is reported per order: the map's bounds at
        level 0.9·α and the outputs' at 0.1·α (:data:`KEPT_SHARE`; Bonferroni over the two, so
        ``n_bounds`` counts both), because the map gives a narrow component of small mass only
        that mass's share of (0, 1), under one bandwidth there, and smooths a leak in it away
        (issue 47; measured: ``docs/calibration.md``, section "Issue 47: a leak the map smooths
        away, …"). The result's ``transform`` records the map of the bound that won
        at more orders (:func:`either_bound`). Of the zoo's continuous mechanisms the Laplace and
        Gaussian ones are mapped
        (``benchmarks/calibration/calibrate_zoo_map.py`` measures them both ways) and the truncated
        ones are not; above 2^21 a side the Gaussian ones are not either, so the coverage studies
        (which bound with ``transform=None``) measure the default there.

    Returns:
      A :class:`Bound` whose array fields are numpy float64 arrays.

    Raises:
      ValueError: on non-finite or empty samples, mismatched dimensions, λ ≤ 1, α outside
        (0, 0.5), zero spread, too many distinct discrete values, or invalid settings.

    Example:
      >>> import numpy as np, rdpjax
      >>> rng = np.random.default_rng(0)
      >>> b = rdpjax.lower_bound(1 + 5 * rng.standard_normal(10**5),
      ...                        5 * rng.standard_normal(10**5), [2, 5])
      >>> bool(np.all(b.lower <= np.array([0.04, 0.10])))
      True
    """
    options = resolve_options(options, fields, caller="lower_bound")
    alpha = check_level(alpha)
    if key is not None:  # an order from the key alone (issue 51: a sampler may sort its batch)
        rng = key_rng(key, ORDER_TAG)
        p_samples, q_samples = (random_order(rng, np.asarray(x)) for x in (p_samples, q_samples))
    if lam is None:
        lam = DEFAULT_ORDERS
    mesh = binning_mesh()
    with float64():
        planned = plan_samples(
            p_samples, q_samples, lam, pad=True, alpha=alpha, both_directions=both_directions,
            options=options, mesh=mesh,
        )  # fmt: skip
        if options.transform != "auto" or planned.transform is None:
            return _bound_of(planned, mesh)
        # "auto" chose the map: the outputs' own KDE is bounded too, the map's bounds at level
        # (1 − KEPT_SHARE)·α and these at KEPT_SHARE·α, and the larger is kept per order
        # (Bonferroni over the two families; either_bound).
        mapped_plan = dataclasses.replace(planned.plan, alpha=planned.plan.alpha * (1 - KEPT_SHARE))
        mapped = _bound_of(
            planned._replace(draws=dataclasses.replace(planned.draws, plan=mapped_plan)), mesh
        )
        del planned, mapped_plan  # the mapped rows, before the outputs' own are placed
        kept = plan_samples(
            p_samples, q_samples, lam, pad=True, alpha=alpha * KEPT_SHARE,
            both_directions=both_directions, options=options.replace(transform=None), mesh=mesh,
        )  # fmt: skip
        if math.prod(kept.plan.shape) > KEPT_MAX_GRID:  # heavy tails: the map's bound alone
            return dataclasses.replace(mapped, alpha=np.asarray(alpha, np.float64))
        return either_bound(mapped, _bound_of(kept, mesh), alpha)


ORDER_TAG = 0x0D40
"""Folded into ``lower_bound``'s ``key`` for the Generator that orders the rows."""

KEPT_SHARE = 0.1
"""The share of α that ``transform="auto"`` gives the outputs' own KDE beside the quantile map.

The map's bound is the tighter on every law the rule maps in the calibration (the zoo's Gaussian
and Laplace mechanisms, the heavy-tailed and multimodal laws off the zoo), so it keeps 90% of α;
the outputs' own KDE is there for a leak the map smooths away (a narrow component of small mass
gets that mass's share of (0, 1), under one bandwidth there), where its bound is many times the
map's and a stricter level costs it little. Measured: ``docs/calibration.md``, section "Issue 47:
a leak the map smooths away, …" (the 0.9 / 0.1 split against an even one: the calibration log's
issue-47 section)."""

KEPT_MAX_GRID = 2**15
"""...unless the outputs' own KDE needs a grid of more than this many points: then the map's
bound (at level 0.9·α, so still valid, a little conservative) is reported alone.

Tails heavy enough to stretch the data's range far beyond the bandwidth are where the map was
designed in and its bound is the tighter at every n measured; the laws whose own KDE is kept
need far smaller grids. Grid sizes and times, measured: ``docs/performance.md``, section "The
outputs' own KDE beside the map: its grid cap (KEPT_MAX_GRID)"."""


BOUND_PROGRAMS = (padded_settings, bin_program, bound_program, mapped_rest_program)
"""The jitted functions :func:`lower_bound` compiles per padded size and layout, kept within
:data:`rdpjax._internal.programs.PROGRAM_BUDGET` together: the settings, the binning, the bound,
and the quantile map on the device (:mod:`rdpjax.estimator.device_map`)."""


def _bound_of(planned: Planned, mesh: Mesh | None) -> Bound:
    """Bin and bound the samples ``planned`` placed (host numpy float64 leaves)."""
    plan, p, q = planned.plan, planned.p, planned.q
    keep_program_budget(BOUND_PROGRAMS, program_key(plan, p, q))
    binned: Binned = bin_program(
        plan, p, q, planned.n_p, planned.n_q, planned.draws.settings(), planned.draws.span,
        None if plan.discrete else mesh,
    )  # fmt: skip
    # Host numpy float64 leaves: arithmetic on the result after the float64 scope has
    # ended must not be truncated to float32 by JAX.
    bound = jax.tree.map(np.asarray, bound_program(plan, binned))
    _check_finite(bound)
    applied = planned.transform
    return bound if applied is None else dataclasses.replace(bound, transform=applied)


_PER_ORDER = ("estimate", "lower", "std_error", "bias", "direction")
"""The fields of a :class:`Bound` that :func:`either_bound` takes order by order."""


def either_bound(first: Bound, second: Bound, alpha: float) -> Bound:
    """The larger of two bounds, order by order, whose levels add up to ``alpha``.

    Each family holds with probability ≥ 1 − its ``alpha``, so both hold together with
    probability ≥ 1 − ``alpha`` (Bonferroni) whatever the dependence between them, e.g. the
    quantile map's bound on the rows left after its pilot and the KDE of all the outputs, and so
    does their maximum. The per-order fields (:data:`_PER_ORDER`) come from the bound that is
    larger at that order; the rest (bandwidth, floor, sizes, grid, ``transform``, the per-bound
    ``level``) from the one larger at more orders (``first`` on a tie). ``n_bounds`` counts both
    families.
    """
    wins = np.asarray(second.lower) > np.asarray(first.lower)
    base = second if 2 * int(wins.sum()) > wins.size else first
    picked = {
        name: np.where(wins, np.asarray(getattr(second, name)), np.asarray(getattr(first, name)))
        for name in _PER_ORDER
    }
    return dataclasses.replace(
        base,
        **picked,
        alpha=np.asarray(alpha, np.float64),
        n_bounds=first.n_bounds + second.n_bounds,
    )


def _check_finite(bound: Bound) -> None:
    if np.any(np.asarray(bound.outside) > 0):  # cannot happen with a layout planned on the data
        raise ValueError(f"{np.asarray(bound.outside)} samples fell outside the planned grid.")
    check_finite_bound(bound)
