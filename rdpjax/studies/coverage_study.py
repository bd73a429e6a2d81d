"""Coverage studies: many replications of an audit in two compiled, vmapped calls.

A lower bound is valid when it lands at or below the truth with probability ≥ 1 − α. For a zoo
mechanism (pure JAX sampler, exact divergence known) this is measured directly: draw R
independent replications of both samples, bound each, and count how often ``lower ≤ exact``.
The replications are split over the devices and each device runs its share inside
``jax.lax.map`` over keys, vmapped in small batches
(:func:`rdpjax.estimator.sharding.map_over_devices`), by the replication driver that
:func:`rdpjax.stream.replicated_bounds` runs too (:func:`rdpjax.stream.replicate.run_replications`).
One program draws them (one compilation per mechanism type and shapes; the pilot that plans
the grid is its first key) and one bounds the samples where they were drawn (one compilation
per grid layout, shared by every mechanism whose pilot plans that layout), chunk by chunk of
at most ``StudyOptions.chunk_samples`` outputs a side; both are reused by later studies with the
same shapes and grid (other keys, mechanism parameters or databases). Each replication's
draws follow from its key alone, so chunks, batches and devices change results only by
rounding.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rdpjax._internal.sharding import draw_mesh, replication_batch_size
from rdpjax._precision import float64
from rdpjax._pytree import pytree_dataclass
from rdpjax._table import markdown_table
from rdpjax._validation import check_int, check_orders
from rdpjax.auditing.draws import exact_divergences
from rdpjax.estimator.api import plan_bound
from rdpjax.estimator.bound_plan import BoundPlan
from rdpjax.estimator.options import BoundOptions, or_default, resolve_options
from rdpjax.mechanisms.base import Mechanism, identity_code
from rdpjax.stream.replicate import run_replications
from rdpjax.stream.samplers import Sampler, mechanism_fn

__all__ = ["CoverageResult", "StudyOptions", "coverage", "format_coverage", "wilson_interval"]


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    It is scipy's ``binomtest(…).proportion_ci(method="wilson")`` (imported on first use:
    0.45 s).
    """
    if trials <= 0:
        raise ValueError("trials must be positive")
    from scipy import stats

    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    # At k = 0 (k = n) the lower (upper) end is exactly 0 (1).
    low = 0.0 if successes == 0 else float(ci.low)
    high = 1.0 if successes == trials else float(ci.high)
    return low, high


@pytree_dataclass(static=("reps", "n"))
class CoverageResult:
    """Per-order coverage and tightness of the bound over ``reps`` replications.

    Attributes:
      lam: ``(L,)`` orders.
      exact: ``(L,)`` exact value of the quantity bounded.
      coverage: ``(L,)`` fraction of replications with ``lower ≤ exact`` for that order.
      coverage_low, coverage_high: ``(L,)`` Wilson 95% interval of the coverage.
      simultaneous: fraction of replications where every order's bound held at once.
      tightness: ``(L,)`` mean of ``lower / exact``.
      lower: ``(reps, L)`` every replication's bounds.
      estimate, std_error: ``(reps, L)``.
      reps, n: replications and outputs per database.
    """

    lam: np.ndarray
    exact: np.ndarray
    coverage: np.ndarray
    coverage_low: np.ndarray
    coverage_high: np.ndarray
    simultaneous: float
    tightness: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    std_error: np.ndarray
    reps: int
    n: int

    def to_dict(self, *, replications: bool = False) -> dict:
        """A JSON-ready summary: per-order lists and the simultaneous coverage.

        The per-order lists are ``lam``, ``exact``, ``covered`` counts, ``coverage`` and its
        Wilson 95% interval, ``tightness``, ``mean_lower`` and ``mean_estimate``; the
        simultaneous coverage comes with its count and interval. ``replications=True`` adds
        every replication's ``lower``, ``estimate``, ``std_error``.
        """
        lower = np.asarray(self.lower)
        exact = np.asarray(self.exact)
        # Counts are recomputed from the replications, not from the rounded fractions.
        covered = (lower <= exact).sum(axis=0)
        both = int(np.all(lower <= exact, axis=1).sum())
        low, high = wilson_interval(both, self.reps)
        out = {
            "n": self.n,
            "reps": self.reps,
            "lam": np.asarray(self.lam).tolist(),
            "exact": exact.tolist(),
            "covered": covered.tolist(),
            "coverage": np.asarray(self.coverage).tolist(),
            "coverage_low": np.asarray(self.coverage_low).tolist(),
            "coverage_high": np.asarray(self.coverage_high).tolist(),
            "simultaneous_covered": both,
            "simultaneous": float(self.simultaneous),
            "simultaneous_low": low,
            "simultaneous_high": high,
            "tightness": np.asarray(self.tightness).tolist(),
            "mean_lower": lower.mean(axis=0).tolist(),
            "mean_estimate": np.asarray(self.estimate).mean(axis=0).tolist(),
        }
        if replications:
            for name in ("lower", "estimate", "std_error"):
                out[name] = np.asarray(getattr(self, name)).tolist()
        return out


def format_coverage(cells: Sequence[dict]) -> str:
    """Markdown table of coverage summaries, one row per (mechanism, n, λ).

    Each cell is a :meth:`CoverageResult.to_dict` with a ``"mechanism"`` key added. The
    simultaneous coverage (every order's bound held in the same replication) is shown once per
    (mechanism, n), on its first row.
    """
    header = (
        "mechanism", "n", "R", "λ", "exact", "coverage (95% CI)", "simultaneous (95% CI)",
        "mean lower/exact",
    )  # fmt: skip
    rows = []
    for cell in cells:
        for j, lam in enumerate(cell["lam"]):
            sim = (
                f"{cell['simultaneous']:.3f} [{cell['simultaneous_low']:.3f}, "
                f"{cell['simultaneous_high']:.3f}]"
                if j == 0
                else ""
            )
            rows.append(
                (
                    cell["mechanism"],
                    f"{cell['n']:,}",
                    cell["reps"],
                    f"{lam:g}",
                    f"{cell['exact'][j]:.6f}",
                    f"{cell['coverage'][j]:.3f} "
                    f"[{cell['coverage_low'][j]:.3f}, {cell['coverage_high'][j]:.3f}]",
                    sim,
                    f"{cell['tightness'][j]:.3f}",
                )  # fmt: skip
            )
    return "\n".join(markdown_table(header, rows))


STUDY_GRID_POINTS = 2**21
"""Grid points bounded together in one vmapped batch: a 3-D grid of 10^6 points or more is
bounded one replication at a time (the second-order terms hold a dozen arrays of the grid's
padded FFT size per replication)."""

STUDY_CHUNK_SAMPLES = 2**24
"""Outputs per database that one study call holds in memory (128 MiB a side in float64): the
replications are drawn and bounded in chunks of at most ``⌊2^24 / n⌋`` (at least one batch per
device)."""


_STUDY_FIELDS = ("batch_size", "devices", "chunk_samples", "grid_points")


def _study_options(options: StudyOptions | None, fields: dict[str, Any]) -> StudyOptions:
    """``options`` with ``fields`` applied: :class:`StudyOptions`' own, else its ``bound``'s."""
    bound_fields = {k: v for k, v in fields.items() if k not in _STUDY_FIELDS}
    base = or_default(options, StudyOptions, "options", "rdpjax.studies.StudyOptions")
    bound = resolve_options(base.bound, bound_fields, caller="coverage")
    own = {k: v for k, v in fields.items() if k in _STUDY_FIELDS}
    return dataclasses.replace(base, bound=bound, **own)


@functools.partial(jax.jit, static_argnames=("reps", "total"))
def _study_keys(key, *, reps, total):
    """``total ≥ reps + 1`` keys: the pilot's, the replications', and padding.

    They are the pilot's ``fold_in(key, 2^31 − 1)``, the replications' ``split(key, reps)``, and
    the last repeated (padding whose results are dropped).
    """
    keys = jnp.concatenate([jax.random.fold_in(key, 2**31 - 1)[None], jax.random.split(key, reps)])
    return jnp.concatenate([keys, jnp.repeat(keys[-1:], total - reps - 1)])


def _pilot_plan(p, q, *, orders, **options) -> BoundPlan:
    """The plan of every replication's bound: ``plan_bound``'s on the pilot's samples."""
    return plan_bound(p, q, orders, **options)[0]


def _chunks(reps: int, n: int, mesh, batch_size: int | None, chunk_samples: int) -> tuple[int, int]:
    """``(batch, chunk)``: replications vmapped together on a device, and replications a call.

    The chunk is a multiple of ``devices · batch`` holding at most ``chunk_samples`` outputs a
    side (or one batch per device).
    """
    batch = batch_size or replication_batch_size(n, reps, mesh)
    batch = min(batch, -(-reps // mesh.size))
    step = mesh.size * batch
    fits = max(1, chunk_samples // n // step) * step
    return batch, min(fits, -(-reps // step) * step)


@dataclasses.dataclass(frozen=True)
class StudyOptions:
    """How :func:`coverage` runs its replications, and the estimator's options.

    Attributes:
      batch_size: replications vmapped together on each device (default:
        :func:`rdpjax.estimator.sharding.replication_batch_size`).
      devices: the devices to split the replications over (default: every device; see
        :func:`rdpjax.estimator.sharding.map_over_devices`).
      chunk_samples: outputs per database one study call holds in memory
        (:data:`STUDY_CHUNK_SAMPLES`).
      grid_points: grid points bounded together in one vmapped batch
        (:data:`STUDY_GRID_POINTS`).
      bound: the :class:`rdpjax.BoundOptions` of every replication's bound (``discrete`` is
        the mechanism's; no quantile map: the studies measure the estimator on the outputs).
    """

    batch_size: int | None = None
    devices: Any = None
    chunk_samples: int = STUDY_CHUNK_SAMPLES
    grid_points: int = STUDY_GRID_POINTS
    bound: BoundOptions = BoundOptions(transform=None)

    def __post_init__(self) -> None:
        if self.batch_size is not None:
            check_int(self.batch_size, "batch_size", 1)
        check_int(self.chunk_samples, "chunk_samples", 1)
        check_int(self.grid_points, "grid_points", 1)


def coverage(
    key,
    mechanism: Mechanism,
    x,
    x_prime,
    lam: float | Sequence[float],
    *,
    n: int,
    reps: int,
    alpha: float = 0.05,
    both_directions: bool = False,
    options: StudyOptions | None = None,
    **fields: Any,
) -> CoverageResult:
    """Empirical coverage of :func:`rdpjax.lower_bound` on a zoo mechanism with a known truth.

    Args:
      key: PRNG key.
      mechanism: a zoo mechanism whose ``divergence`` is known for ``(x, x_prime)``.
      x: the first of two adjacent databases.
      x_prime: the second, adjacent to ``x``.
      lam: orders; the bounds of one replication are simultaneous (Bonferroni) as in
        :func:`rdpjax.lower_bound`.
      n: outputs per database per replication.
      reps: number of replications (R).
      alpha: family-wise level.
      both_directions: bound both directions; the truth is then the larger divergence.
      options: a :class:`StudyOptions` (batching, devices, the estimator's options).
      **fields: fields of :class:`StudyOptions` or of :class:`rdpjax.BoundOptions` by name
        (``batch_size=…``, ``bandwidth=…``); any other name is a ``TypeError``.

    Raises:
      ValueError: if the mechanism has no exact divergence for the pair, reps < 1, n < 2,
        batch_size < 1, an order λ ≤ 1, or devices name no device.
    """
    options = _study_options(options, fields)
    batch_size = options.batch_size
    if not isinstance(mechanism, Mechanism):
        raise ValueError("coverage needs a rdpjax.mechanisms mechanism (a pure JAX sampler).")
    reps, n = check_int(reps, "reps", 1), check_int(n, "n", 2)
    mesh = draw_mesh(options.devices)
    orders = [float(v) for v in check_orders(lam)]
    exact = exact_divergences(mechanism, x, x_prime, orders, both_directions)
    if exact is None:
        raise ValueError(f"{mechanism.name} has no exact divergence for this pair at {orders}.")
    out_x, out_xp = mechanism.output(x), mechanism.output(x_prime)
    discrete = out_x.is_discrete
    # Each side's outputs, encoded (discrete) as its ``output(·).encode`` does.
    encoders = [s.encoder if s.encoder is not None else identity_code for s in (out_x, out_xp)]
    samplers = tuple(Sampler(fn=mechanism_fn, encode=e if discrete else None) for e in encoders)

    with float64():
        x, x_prime = jnp.asarray(x), jnp.asarray(x_prime)  # float64, as ``sample`` converts them
        mechanism.check_database(x)
        mechanism.check_database(x_prime)
        # Key 0 draws the pilot that plans the grid (as ``mechanism.sample`` would draw it),
        # keys 1 … R the replications; all go through one compiled draw, chunk by chunk.
        batch, chunk = _chunks(reps + 1, n, mesh, batch_size, options.chunk_samples)
        total = -(-(reps + 1) // chunk) * chunk
        keys = _study_keys(key, reps=reps, total=total)
        bounds = run_replications(
            keys,
            functools.partial(
                _pilot_plan,
                orders=orders,
                alpha=alpha,
                both_directions=both_directions,
                options=options.bound.replace(discrete=discrete),
                support_size=out_x.alphabet_size if discrete else None,
            ),
            (mechanism, x, x_prime),
            n=n,
            samplers=samplers,
            batch_size=batch,
            mesh=mesh,
            chunk=chunk,
            grid_points=options.grid_points,
        )
        est, se, lower = (
            getattr(bounds, f)[1 : reps + 1] for f in ("estimate", "std_error", "lower")
        )
    held = lower <= exact
    cov = held.mean(axis=0)
    intervals = [wilson_interval(int(k), reps) for k in held.sum(axis=0)]
    return CoverageResult(
        lam=np.asarray(orders),
        exact=exact,
        coverage=cov,
        coverage_low=np.array([lo for lo, _ in intervals]),
        coverage_high=np.array([hi for _, hi in intervals]),
        simultaneous=float(np.all(held, axis=1).mean()),
        tightness=(lower / exact).mean(axis=0),
        lower=lower,
        estimate=est,
        std_error=se,
        reps=reps,
        n=n,
    )
