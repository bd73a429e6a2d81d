"""Bounds straight from a sampler: streamed draws, split across devices, and vmapped studies.

:func:`rdpjax.lower_bound` takes samples that already exist in memory. Here the samples are
drawn inside the computation instead, from a *sampler* ``sample_fn(key, m) -> (m,) or (m, d)``
(e.g. ``lambda k, m: mech.sample(k, x, m)``):

* :func:`streamed_bound` draws ``n`` outputs per side chunk by chunk inside one ``lax.scan`` and
  bins each chunk as it is drawn (:func:`rdpjax.binning.bin_chunk`), so the samples never exist
  in full: n up to 2^31 per side in memory O(chunk + grid). The bound is then eq. (16) of
  Kutta, Askin, Dunsche, arXiv:2212.04739v3 computed from the two histograms
  (:meth:`rdpjax.BoundPlan.bound`), exactly as :func:`rdpjax.lower_bound` computes it from the
  same draws binned on the same grid. The chunks can be dealt out to several devices
  (:mod:`rdpjax.sharding`); one device and D devices draw the same samples.
* :func:`replicated_bounds` runs R replications of an audit at n per side, on P database pairs,
  for L orders, as one compiled, vmapped call; a second call with the same shapes reuses it.

**Draws.** With ``k_pilot, k_p, k_q = jax.random.split(key, 3)``, chunk ``i < n // chunk`` of
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
scan, through one fixed module-level host callback (:func:`_forward_progress`) that forwards to
the callables of the runs under way, so the compiled stream depends only on whether progress is
on. Reports come every ``⌈b/u⌉`` of a device's ``b`` scan steps (``u = 64 / D`` updates per side
and device, D devices), about 128 over a long run, but no more often than every 2^22 draws of a
device (:data:`_PROGRESS_MIN_DRAWS`), which keeps their cost small on short runs. The scan is
then split into groups of steps with a report after each (:func:`_scan_with_reports`): the same
steps in the same order, so the same counts and bound as without progress.

The pilot → plan/grid step (:func:`_fix_settings`) and the counts → bound step
(:func:`_bound_from_counts`) are shared with the black-box bound of :mod:`rdpjax.blackbox`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import math
import threading
import warnings
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from rdpjax._precision import float64
from rdpjax._validation import check_int
from rdpjax.binning import BINNING_METHODS, bin_accumulator, bin_chunk, bin_counts, count_chunk
from rdpjax.bounds import (
    DEFAULTS,
    Binned,
    Bound,
    BoundPlan,
    Defaults,
    _bound,
    _check_bandwidth,
    _check_grid_size,
    _check_layout,
    _continuous_layout,
    _continuous_settings,
    _discrete_settings,
    _plan_options,
    plan_bound,
)
from rdpjax.grid import Grid, grid_from_range
from rdpjax.mechanisms.base import Mechanism, identity_code
from rdpjax.sharding import (
    draw_mesh,
    map_over_devices,
    replication_batch_size,
    sum_over_devices,
)

__all__ = [
    "DEFAULT_STREAM_CHUNK",
    "DEFAULT_PILOT",
    "streamed_bound",
    "streamed_samples",
    "mechanism_streamed_bound",
    "replicated_bounds",
]

DEFAULT_STREAM_CHUNK = 2**17
"""Samples drawn and binned per scan step (per device). On a 2-core CPU, streaming 1e8 per side
(``benchmarks/throughput.py --stream-child 100000000 --chunk C --cpu-devices D``, the second call)
took 2.8 s at 2^16 and 2^17 against 3.1 s at 2^18 on two devices, and 3.3 s at 2^17 against 3.8–3.9
s at 2^16 and 2^18 on one (cache-resident temporaries; 2^20 was slower still). On a GPU larger
chunks (2^22) amortize the per-step launch cost better."""

DEFAULT_PILOT = 2**16
"""Pilot outputs per side: as many as :func:`rdpjax.lower_bound` uses for its scale anyway."""

# ----------------------------------------------------------------------------- samplers


@dataclasses.dataclass(frozen=True)
class _Sampler:
    """A static (hashable) sampler: ``fn(key, m, *args)``, then ``encode`` for codes.

    Equal functions give equal samplers, so passing the same ``sample_fn`` again reuses the
    compiled stream; the traced ``args`` (a mechanism and its database) may change freely.
    """

    fn: Callable
    encode: Callable | None = None

    def __call__(self, key, m: int, args) -> jnp.ndarray:
        out = jnp.asarray(self.fn(key, m, *args))
        return out if self.encode is None else self.encode(out)


def _mechanism_fn(key, m, mechanism, database):
    return mechanism._sample(key, database, m)


def _user_sampler(fn: Callable) -> _Sampler:
    if not callable(fn):
        raise ValueError(f"a sampler must be callable as sample_fn(key, m); got {fn!r}.")
    return _Sampler(fn=fn)


# ----------------------------------------------------------------------------- progress

_PROGRESS_UPDATES = 64
"""Progress reports per side (over all devices together) of a long streamed run with
``progress``: about 128 calls of the user's ``progress`` over both sides."""

_PROGRESS_MIN_DRAWS = 2**22
"""Draws a device makes between two reports, at least (about 30 ms of work on the 2-core CPU).
A report stops the device for a host round trip: ~0.06 ms on that machine idle, ~2 ms when
other processes load it. With a report every 2^21 draws (96 reports at n = 1e8 per side on 2
devices), 1e8 per side took +0.8% longer with progress at load ≈ 2 and +3.9% at load 3–5
(median of 8 paired runs each, ``benchmarks/audit_memory.py``); with 2^22 (48 reports) −1.0%
at load 2.5–5, within noise. Reports on 2 devices: n = 1e7 per side 8, 1e8 48, 1e9 128."""


class _ProgressRun:
    """Host state of one streamed run with a ``progress`` callable: the real chunks each device
    has reported done, per side. The reports may arrive from several runtime threads, in any
    order: each (side, device) keeps its largest count, so ``done`` never decreases."""

    def __init__(self, sink: Callable, sizes: tuple[int, int], chunk: int):
        self.sink, self.total, self.chunk = sink, sum(sizes), chunk
        self.chunks: dict[tuple[int, int], int] = {}
        self.reported = 0
        self.error: BaseException | None = None
        self.lock = threading.Lock()

    def update(self, side: int, first: int, chunks: int) -> None:
        with self.lock:
            key = (side, first)
            self.chunks[key] = max(self.chunks.get(key, 0), chunks)
            done = min(self.chunk * sum(self.chunks.values()), self.total)
            if done > self.reported:
                self.reported = done
                self._call(done)

    def finish(self) -> None:
        with self.lock:
            if self.reported < self.total:
                self.reported = self.total
                self._call(self.total)

    def _call(self, done: int) -> None:
        if self.error is not None:
            return
        try:
            self.sink(done, self.total)
        except BaseException as err:  # re-raised on the caller's thread, after the run
            self.error = err


_PROGRESS_RUNS: dict[int, _ProgressRun] = {}
_PROGRESS_IDS = itertools.count()


def _forward_progress(tag, first, chunks, _after=None) -> None:
    """The one host callback every compiled stream calls (so that a new ``progress`` callable
    never recompiles it): forwards a device's report to the run that ``tag // 2`` names.
    ``_after`` is only a data dependency (see :func:`_scan_with_reports`)."""
    run = _PROGRESS_RUNS.get(int(tag) // 2)
    if run is not None:
        run.update(int(tag) % 2, int(first), int(chunks))


def _report_every(ids, chunk: int, mesh) -> int:
    """Scan steps of a device between two reports (static): ``⌈b / u⌉`` of its ``b`` steps,
    ``u = max(1, _PROGRESS_UPDATES // D)``, but at least ``⌈_PROGRESS_MIN_DRAWS / chunk⌉``
    (and at most ``b``)."""
    b = ids.shape[0]
    return max(
        -(-b // max(1, _PROGRESS_UPDATES // mesh.size)), min(-(-_PROGRESS_MIN_DRAWS // chunk), b)
    )


def _scan_with_reports(step, carry, ids, tag, full: int, *, every: int):
    """``lax.scan(step, carry, ids)[0]`` with a progress report after every ``every`` steps:
    an outer scan over groups of ``every`` ids, each an inner scan of ``step`` followed by one
    host callback (:func:`_forward_progress`) with the device's real chunks done (padding chunks,
    ids ≥ ``full``, are not counted); the ``b mod every`` last ids are one more group. The steps
    run in the same order as in the plain scan, so the result is the same; the callback sits
    outside the inner loop, which a callback inside it (under a ``lax.cond``) had slowed by
    about 5% even when it fired only once per device (n = 3e7 per side on 2 CPU devices,
    median of 10 paired runs)."""
    first = ids[0]
    groups, rest = divmod(ids.shape[0], every)

    def group(carry, group_ids):
        carry = lax.scan(step, carry, group_ids)[0]
        done = jnp.clip(jnp.minimum(group_ids[-1] + 1, full) - first, 0)
        # The carry's outside count as an operand: the report then waits for the group's
        # draws (an unordered callback on ids alone was run before them).
        jax.debug.callback(_forward_progress, tag, first, done, carry[1])
        return carry, None

    if groups:
        carry = lax.scan(group, carry, ids[: groups * every].reshape(groups, every))[0]
    if rest:
        carry = group(carry, ids[groups * every :])[0]
    return carry


@contextlib.contextmanager
def _progress_run(progress: Callable | None, sizes: tuple[int, int], chunk: int):
    """Registers a run for the duration of the block; yields its id (0 without ``progress``).
    On leaving, reports ``done = total`` once and re-raises what ``progress`` raised."""
    if progress is None:
        yield 0
        return
    run_id = next(_PROGRESS_IDS) % 2**30  # tag = 2 · id + side fits int32
    run = _PROGRESS_RUNS[run_id] = _ProgressRun(progress, sizes, chunk)
    try:
        yield run_id
        jax.effects_barrier()
    finally:
        del _PROGRESS_RUNS[run_id]
    run.finish()
    if run.error is not None:
        raise run.error


# ----------------------------------------------------------------------------- kernels


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Static description of what a chunk is binned onto."""

    discrete: bool
    shape: tuple[int, ...]
    interior: tuple[tuple[int, int], ...] | None = None  # continuous: the data range, in cells


@functools.partial(
    jax.jit,
    static_argnames=("sampler", "n", "chunk", "layout", "method", "mesh", "impl", "progress"),
)
def _stream_side(
    key_data, args, low, spacing, tag, *, sampler, n, chunk, layout, method, mesh, impl, progress
):
    """Counts, outside and non-finite numbers of ``n`` draws: full chunk ``i < n // chunk`` from
    ``fold_in(key, i)``, dealt out to the devices, then the ``n mod chunk`` rest from ``fold_in(key,
    n // chunk)``. When the devices do not divide the chunks, the padding chunks (at most one per
    device) are drawn but masked out: a ``lax.cond`` around the draw would skip them, but it also
    kept XLA from spreading the draws over the CPU cores (about 2 ns more per sample on two CPU
    devices, measured). Non-finite draws, which carry no mass, are counted as ``n − Σ counts`` at
    the end. With ``progress``, each device reports its real chunks done to the host
    (:func:`_scan_with_reports`, ``tag`` naming the run and side) every
    :func:`_report_every` steps."""
    full, rest = divmod(n, chunk)

    def add(carry, x, grid, valid=None):
        acc, outside = carry
        if layout.discrete:
            return count_chunk(acc, outside, x.reshape(-1), valid=valid, clamp=True, method=method)
        x = x.reshape(x.shape[0], -1)
        box = layout.interior
        return bin_chunk(acc, outside, x, grid, valid=valid, interior=box, method=method)

    def task(ids, key_data, args, low, spacing, tag):  # on each device, replicated inputs
        key = jax.random.wrap_key_data(key_data, impl=impl)
        grid = Grid(low=low, spacing=spacing, shape=layout.shape)

        def step(carry, i):
            x = sampler(jax.random.fold_in(key, i), chunk, args)
            if ids.shape[0] * mesh.size == full:  # no padding chunks
                return add(carry, x, grid), None
            return add(carry, x, grid, valid=jnp.broadcast_to(i < full, (chunk,))), None

        init = jnp.zeros(grid.size, jnp.float64) if layout.discrete else bin_accumulator(grid)
        init = (init, jnp.zeros((), jnp.float64))
        if not progress:
            return lax.scan(step, init, ids)[0]
        return _scan_with_reports(step, init, ids, tag, full, every=_report_every(ids, chunk, mesh))

    grid = Grid(low=low, spacing=spacing, shape=layout.shape)
    acc, outside = sum_over_devices(task, full, mesh, key_data, args, low, spacing, tag)
    if rest:
        key = jax.random.wrap_key_data(key_data, impl=impl)
        x = sampler(jax.random.fold_in(key, full), rest, args)
        acc, outside = add((acc, outside), x, grid)
    counts = acc if layout.discrete else bin_counts(acc, grid)
    nonfinite = jnp.round(n - counts.sum()) if not layout.discrete else jnp.zeros(())
    return counts.reshape(layout.shape), outside, nonfinite


@functools.partial(jax.jit, static_argnames=("sampler", "n", "chunk", "impl"))
def _materialize(key_data, args, *, sampler, n, chunk, impl):
    key = jax.random.wrap_key_data(key_data, impl=impl)
    full, rest = divmod(n, chunk)
    chunks = lax.map(
        lambda i: sampler(jax.random.fold_in(key, i), chunk, args),
        jnp.arange(full, dtype=jnp.int32),
    )
    out = chunks.reshape((full * chunk,) + chunks.shape[2:])
    if rest:
        out = jnp.concatenate([out, sampler(jax.random.fold_in(key, full), rest, args)])
    return out


@functools.partial(jax.jit, static_argnames=("sampler", "m"))
def _pilot_draw(key, args, *, sampler, m):
    return sampler(key, m, args)


# ----------------------------------------------------------------------------- validation


def _sizes(n) -> tuple[int, int]:
    if isinstance(n, tuple | list):
        if len(n) != 2:
            raise ValueError(f"n must be an int or a pair (n_p, n_q); got {n!r}.")
        return check_int(n[0], "n", 2), check_int(n[1], "n", 2)
    n = check_int(n, "n", 2)
    return n, n


def _as_key(key) -> jax.Array:
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key
    if key.dtype == jnp.uint32 and key.shape == (2,):
        return jax.random.wrap_key_data(key)
    raise ValueError(f"key must be a jax.random key; got dtype {key.dtype}, shape {key.shape}.")


@functools.partial(jax.jit, static_argnames=("sampler",))
def _probe(key, args, *, sampler):
    return sampler(key, 3, args)


def _output_kind(sampler: _Sampler, args, key) -> tuple[bool, int]:
    """(integer codes?, dimension d) of a sampler's output, from its abstract evaluation."""
    out = _probe.eval_shape(key, args, sampler=sampler)  # traced once per sampler
    if out.ndim not in (1, 2) or out.shape[0] != 3:
        raise ValueError(
            f"a sampler must return shape (m,) or (m, d) for m draws; got {out.shape}."
        )
    integer = bool(jnp.issubdtype(out.dtype, jnp.integer) or out.dtype == jnp.bool_)
    return integer, 1 if out.ndim == 1 else int(out.shape[1])


@functools.partial(jax.jit, static_argnames=("defaults", "n"))
def _pilot_settings(pilot_p, pilot_q, bandwidth, floor, beta, *, defaults, n):
    # One compiled call instead of a few dozen eager ones on every streamed bound.
    return _continuous_settings(pilot_p, pilot_q, bandwidth, floor, beta, defaults, n=n)


_grid = jax.jit(grid_from_range, static_argnames=("shape", "pad"))


# ----------------------------------------------------------------------------- fixed settings


@dataclasses.dataclass(frozen=True)
class _Fixed:
    """Everything fixed before the certifying draws exist: the plan, what a chunk is binned onto
    (the grid's ``low``/``spacing`` as host arrays), and the settings (h, τ, β)."""

    plan: BoundPlan
    layout: _Layout
    grid: Grid | None
    low: np.ndarray
    spacing: np.ndarray
    bandwidth: jnp.ndarray
    floor: jnp.ndarray
    beta: jnp.ndarray


def _fix_settings(
    draw_pilot: Callable[[], tuple[np.ndarray, np.ndarray]],
    lam,
    *,
    integer: bool,
    d: int,
    n_p: int,
    n_q: int,
    grid,
    margin: float,
    discrete: bool | None,
    support_size: int | None,
    outside: str,
    alpha: float,
    bandwidth,
    floor,
    beta,
    grid_size: int | None,
    both_directions: bool,
    variance: str,
    second_order: bool,
    defaults: Defaults,
    layout: str,
) -> _Fixed:
    """The pilot → plan/grid step shared by the streamed and the black-box bounds (module
    docstring: grid and settings). ``draw_pilot()`` returns the two pilot draws (numpy); it is
    called only when a setting needs them. Runs inside ``rdpjax.float64()``."""
    if discrete is None:
        discrete = integer
    if discrete and not integer:
        raise ValueError("discrete=True needs samplers returning integer codes.")
    if support_size is not None and not discrete:
        raise ValueError("support_size is for discrete codes; not with discrete=False.")
    common = _plan_options(
        lam,
        alpha=alpha,
        floor=floor,
        beta=beta,
        discrete=bool(discrete),
        both_directions=both_directions,
        variance=variance,
        second_order=second_order,
        defaults=defaults,
    )
    if discrete:
        if bandwidth is not None:
            raise ValueError("bandwidth applies to continuous data only.")
        if support_size is None:
            codes = np.concatenate(draw_pilot())
            if codes.min() < 0:
                raise ValueError("discrete samplers must return codes ≥ 0.")
            size = int(codes.max()) + 1
        else:
            size = check_int(support_size, "support_size", 1)
        floor_, beta_ = _discrete_settings(min(n_p, n_q), common["floor"], common["beta"], defaults)
        plan = BoundPlan(bandwidth=None, shape=(size,), pad=(0,), half_width=(0,), **common)
        # Clamped under "raise" too (it raises on any clamped draw): one compiled stream.
        return _Fixed(
            plan=plan,
            layout=_Layout(discrete=True, shape=(size,)),
            grid=None,
            low=np.zeros(1),
            spacing=np.ones(1),
            bandwidth=jnp.zeros(1, jnp.float64),
            floor=jnp.asarray(floor_, jnp.float64),
            beta=jnp.asarray(beta_, jnp.float64),
        )
    if d > 3:
        raise ValueError(f"continuous outputs must have dimension d ≤ 3; got d = {d}.")
    bandwidth = _check_bandwidth(bandwidth, d)
    _check_grid_size(grid_size)
    needs_pilot = grid is None or bandwidth is None or common["floor"] is None
    pilot_p = pilot_q = None
    if needs_pilot:
        pilot_p, pilot_q = (x.reshape(x.shape[0], -1).astype(np.float64) for x in draw_pilot())
        for name, x in (("sample_p", pilot_p), ("sample_q", pilot_q)):
            if not np.all(np.isfinite(x)):
                raise ValueError(f"{name} returned non-finite values in the pilot draw.")
    if grid is None:
        lo = np.minimum(pilot_p.min(0), pilot_q.min(0))
        hi = np.maximum(pilot_p.max(0), pilot_q.max(0))
        if np.any(hi <= lo):
            raise ValueError(
                "the pilot draw has zero spread: a kernel density needs varied values "
                "(pass discrete=True for integer outputs, or grid=(low, high))."
            )
        width = hi - lo
        lo, hi = lo - margin * width, hi + margin * width
    else:
        lo, hi = _check_range(grid, d)
        if outside == "raise" and pilot_p is not None:
            pooled = np.concatenate([pilot_p, pilot_q])
            if np.any(pooled < lo) or np.any(pooled > hi):
                raise ValueError(
                    f"grid=({lo.tolist()}, {hi.tolist()}) does not cover the pilot draw "
                    f"(range {pooled.min(0).tolist()} to {pooled.max(0).tolist()})."
                )
    if pilot_p is None:  # every setting given: the scale is not needed
        h = jnp.broadcast_to(jnp.asarray(bandwidth, jnp.float64), (d,))
        floor_ = jnp.asarray(common["floor"], jnp.float64)
        beta_ = 1.0 / floor_ if common["beta"] is None else jnp.asarray(common["beta"])
    else:
        h, floor_, beta_ = _pilot_settings(
            pilot_p,
            pilot_q,
            bandwidth,
            common["floor"],
            common["beta"],
            defaults=defaults,
            n=min(n_p, n_q),
        )
    shape, pad, half_width = _continuous_layout(lo, hi, np.asarray(h), grid_size, layout)
    plan = BoundPlan(bandwidth=bandwidth, shape=shape, pad=pad, half_width=half_width, **common)
    grid_obj = _grid(lo, hi, shape=shape, pad=pad)
    interior = tuple((p, s - 1 - p) for s, p in zip(shape, pad, strict=True))
    return _Fixed(
        plan=plan,
        layout=_Layout(discrete=False, shape=shape, interior=interior),
        grid=grid_obj,
        low=np.asarray(grid_obj.low),
        spacing=np.asarray(grid_obj.spacing),
        bandwidth=jnp.asarray(h, jnp.float64),
        floor=floor_,
        beta=beta_,
    )


def _bound_from_counts(
    fixed: _Fixed, counts, outside_counts, sizes, *, outside: str, stacklevel: int
) -> Bound:
    """Eq. (16) from the accumulated counts (:meth:`rdpjax.BoundPlan.bound`), after the
    outside-mass policy (module docstring). ``counts``, ``outside_counts`` and ``sizes`` are
    (P, Q) pairs of host arrays and ints. Runs inside ``rdpjax.float64()``."""
    counted = np.array([float(c) for c in outside_counts])
    if np.any(counted > 0):
        message = (
            f"{counted.astype(int).tolist()} draws (P, Q) fell outside the grid range or support"
        )
        if outside == "raise":
            raise ValueError(message + "; pass a wider grid= or outside='clip'.")
        warnings.warn(
            message + " and were clamped onto its edge (the bound stays valid, possibly "
            "looser); see Bound.outside.",
            stacklevel=stacklevel + 1,
        )
    (counts_p, counts_q), (n_p, n_q) = counts, sizes
    binned = Binned(
        counts_p=counts_p,
        counts_q=counts_q,
        n_p=jnp.asarray(n_p, jnp.int64),
        n_q=jnp.asarray(n_q, jnp.int64),
        outside=jnp.stack([jnp.asarray(c, jnp.float64) for c in outside_counts]),
        grid=fixed.grid,
        bandwidth=fixed.bandwidth,
        floor=jnp.asarray(fixed.floor, jnp.float64),
        beta=jnp.asarray(fixed.beta, jnp.float64),
    )
    bound = jax.tree.map(np.asarray, _bound(fixed.plan, binned))
    for name in ("estimate", "lower", "std_error"):
        if not np.all(np.isfinite(np.asarray(getattr(bound, name)))):
            raise ValueError(
                f"the {name} is not finite: the samples are too far apart for the floor "
                f"τ={float(bound.floor):.3g} (try a larger floor or bandwidth)."
            )
    return bound


def _check_options(*, pilot, outside, margin, progress) -> int:
    pilot = check_int(pilot, "pilot", 2)
    if outside not in ("clip", "raise"):
        raise ValueError(f"outside must be 'clip' or 'raise'; got {outside!r}.")
    if not (isinstance(margin, int | float) and math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number ≥ 0; got {margin!r}.")
    if progress is not None and not callable(progress):
        raise ValueError(
            f"progress must be None or callable as progress(done, total); got {progress!r}."
        )
    return pilot


# ----------------------------------------------------------------------------- streamed bound


def _streamed(
    key,
    samplers: tuple[_Sampler, _Sampler],
    args: tuple,
    lam,
    *,
    n,
    chunk: int,
    grid,
    pilot: int,
    margin: float,
    discrete: bool | None,
    support_size: int | None,
    outside: str,
    devices,
    binning: str,
    alpha: float,
    bandwidth,
    floor,
    beta,
    grid_size: int | None,
    both_directions: bool,
    variance: str,
    second_order: bool,
    defaults: Defaults,
    layout: str = "exact",
    progress: Callable | None = None,
) -> Bound:
    _check_layout(layout)
    n_p, n_q = _sizes(n)
    chunk = min(check_int(chunk, "chunk", 1), max(n_p, n_q))
    if -(-max(n_p, n_q) // chunk) > 2**31 - 1:
        raise ValueError(f"n / chunk must stay below 2^31 chunks; got n={n}, chunk={chunk}.")
    pilot = _check_options(pilot=pilot, outside=outside, margin=margin, progress=progress)
    if binning not in BINNING_METHODS:
        raise ValueError(f"binning must be one of {BINNING_METHODS}; got {binning!r}.")
    mesh = draw_mesh(devices)
    key = _as_key(key)
    impl = str(jax.random.key_impl(key))
    k_pilot, k_p, k_q = jax.random.split(key, 3)
    kp_pilot, kq_pilot = jax.random.split(k_pilot)
    with float64():
        kinds = [_output_kind(s, a, key) for s, a in zip(samplers, args, strict=True)]
        if kinds[0] != kinds[1]:
            raise ValueError(
                "sample_p and sample_q must return the same kind of output; got "
                f"(integer, d) = {kinds[0]} and {kinds[1]}."
            )
        integer, d = kinds[0]

        def draw_pilot():
            return tuple(
                np.asarray(_pilot_draw(k, a, sampler=s, m=pilot))
                for k, s, a in zip((kp_pilot, kq_pilot), samplers, args, strict=True)
            )

        fixed = _fix_settings(
            draw_pilot,
            lam,
            integer=integer,
            d=d,
            n_p=n_p,
            n_q=n_q,
            grid=grid,
            margin=margin,
            discrete=discrete,
            support_size=support_size,
            outside=outside,
            alpha=alpha,
            bandwidth=bandwidth,
            floor=floor,
            beta=beta,
            grid_size=grid_size,
            both_directions=both_directions,
            variance=variance,
            second_order=second_order,
            defaults=defaults,
            layout=layout,
        )
        with _progress_run(progress, (n_p, n_q), chunk) as run_id:
            results = []
            for side, (k, s, a, m) in enumerate(
                zip((k_p, k_q), samplers, args, (n_p, n_q), strict=True)
            ):
                results.append(
                    _stream_side(
                        np.asarray(jax.random.key_data(k)),
                        a,
                        fixed.low,
                        fixed.spacing,
                        np.int32(2 * run_id + side),
                        sampler=s,
                        n=m,
                        chunk=chunk,
                        layout=fixed.layout,
                        method=binning,
                        mesh=mesh,
                        impl=impl,
                        progress=progress is not None,
                    )
                )
            # Host copies: the bound's compilation is then shared with lower_bound's (jit keys
            # include input shardings, and the stream's outputs live on the mesh).
            (counts_p, out_p, bad_p), (counts_q, out_q, bad_q) = jax.device_get(results)
        nonfinite = np.array([float(bad_p), float(bad_q)])
        if np.any(nonfinite > 0):
            raise ValueError(
                f"the samplers returned {nonfinite.astype(int).tolist()} non-finite values "
                "(P, Q); a mechanism's outputs must be finite."
            )
        return _bound_from_counts(
            fixed,
            (counts_p, counts_q),
            (out_p, out_q),
            (n_p, n_q),
            outside=outside,
            stacklevel=3,
        )


def _check_range(grid, d: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        low, high = grid
        lo = np.broadcast_to(np.asarray(low, np.float64), (d,)).copy()
        hi = np.broadcast_to(np.asarray(high, np.float64), (d,)).copy()
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"grid must be a range (low, high) of numbers or {d}-vectors; got {grid!r}."
        ) from err
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)):
        raise ValueError(f"grid must satisfy low < high, both finite; got {grid!r}.")
    return lo, hi


def streamed_bound(
    key,
    sample_p: Callable,
    sample_q: Callable,
    lam,
    *,
    n,
    chunk: int = DEFAULT_STREAM_CHUNK,
    grid=None,
    pilot: int = DEFAULT_PILOT,
    margin: float = 0.5,
    discrete: bool | None = None,
    support_size: int | None = None,
    outside: str = "clip",
    devices: Sequence[jax.Device] | int | None = None,
    binning: str = "scatter",
    alpha: float = 0.05,
    bandwidth=None,
    floor=None,
    beta=None,
    grid_size: int | None = None,
    both_directions: bool = False,
    variance: str = "autodiff",
    second_order: bool = True,
    defaults: Defaults = DEFAULTS,
    layout: str = "exact",
    progress: Callable[[int, int], None] | None = None,
) -> Bound:
    """A lower bound on ``D_λ(P‖Q)`` from ``n`` draws per side that never exist in full.

    Eq. (16) of Kutta, Askin, Dunsche, arXiv:2212.04739v3, as :func:`rdpjax.lower_bound`, with
    the densities (9)/(10) estimated from histograms accumulated chunk by chunk (module
    docstring: draws, grid, outside mass). Cost O(n · 2^d) draws and binning, split over the
    devices, plus O(L · g log g) for the bound; memory O(chunk + g) per device.

    Args:
      key: a ``jax.random`` key.
      sample_p, sample_q: ``sample(key, m)`` returning ``m`` outputs of the mechanism on x and
        on x', shape ``(m,)`` or ``(m, d)`` (d ≤ 3): floats (continuous) or integer codes
        (discrete). Pure and jittable with ``m`` static. The compiled stream is reused when the
        same function objects are passed again.
      lam: an order λ > 1 or a sequence of orders.
      n: draws per side (int ≥ 2, up to 2^31 and beyond), or a pair ``(n_p, n_q)``.
      chunk: draws per scan step and device (capped at n).
      grid: ``(low, high)``: the range the grid covers (scalars or d-vectors); default: the
        pilot's range widened by ``margin`` widths on each side.
      pilot: outputs per side of the pilot draw that sets the range and the default bandwidth
        and floor (drawn only when one of them is not given).
      margin: widening of the pilot range, in multiples of its width, per side.
      discrete: ``None`` decides from the samplers' dtype (integers → relative frequencies).
      support_size: discrete: codes lie in ``[0, support_size)``; default the pilot's largest
        code + 1.
      outside: ``"clip"`` (clamp and count, default) or ``"raise"`` for draws off the range.
      devices: devices to split the draws over (:func:`rdpjax.sharding.draw_mesh`): a list,
        a count, or ``None`` for all of ``jax.devices()``.
      binning: ``"scatter"`` (default) or ``"sort"`` (a workaround for slow GPU scatter-adds;
        :mod:`rdpjax.binning`).
      alpha, bandwidth, floor, beta, grid_size, both_directions, variance, second_order,
        defaults: as in :func:`rdpjax.lower_bound` and :func:`rdpjax.plan_bound`.
      layout: ``"exact"`` or ``"bucketed"`` (:func:`rdpjax.plan_bound`). The grid follows each
        call's pilot draw, so with ``"exact"`` a second call with new keys usually compiles the
        stream and the bound again (5 s at n = 1e6 on 2 CPU cores); ``"bucketed"`` rounds the
        layout so that such calls mostly reuse them.
      progress: optional ``progress(done, total)``, called from inside the scan (a
        ``jax.debug.callback``, on a runtime thread) up to about 128 times (fewer on runs
        shorter than ~5e8 per side: at most once per 2^22 draws of a device) with the
        draws done so far over both sides (non-decreasing), ``total = n_p + n_q``, and once
        more with ``done = total`` at the end, e.g. to drive a progress bar. It changes no
        result; the compiled stream depends only on whether it is given, not on which
        callable it is. An exception it raises is re-raised after the run.

    Returns:
      A :class:`rdpjax.Bound` (numpy leaves); ``outside`` holds the numbers of draws clamped
      onto the edge of the range.

    Raises:
      ValueError: for n < 2, chunk < 1, an invalid grid range or option, non-finite draws, or
        (with ``outside="raise"``) draws off the range.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from rdpjax.stream import streamed_bound
      >>> p = lambda k, m: 1.0 + 5.0 * jax.random.normal(k, (m,), jnp.float32)
      >>> q = lambda k, m: 5.0 * jax.random.normal(k, (m,), jnp.float32)
      >>> b = streamed_bound(jax.random.key(0), p, q, [2.0, 5.0], n=10**6)
      >>> bool((b.lower <= [0.04, 0.10]).all())
      True
    """
    return _streamed(
        key,
        (_user_sampler(sample_p), _user_sampler(sample_q)),
        ((), ()),
        lam,
        n=n,
        chunk=chunk,
        grid=grid,
        pilot=pilot,
        margin=margin,
        discrete=discrete,
        support_size=support_size,
        outside=outside,
        devices=devices,
        binning=binning,
        alpha=alpha,
        bandwidth=bandwidth,
        floor=floor,
        beta=beta,
        grid_size=grid_size,
        both_directions=both_directions,
        variance=variance,
        second_order=second_order,
        defaults=defaults,
        layout=layout,
        progress=progress,
    )


def _mechanism_samplers(mechanism: Mechanism, x, x_prime):
    if not isinstance(mechanism, Mechanism):
        raise ValueError("a rdpjax.mechanisms mechanism (a pure JAX sampler) is needed.")
    x, x_prime = jnp.asarray(x), jnp.asarray(x_prime)
    mechanism.check_database(x)
    mechanism.check_database(x_prime)
    spec = mechanism.output(x)
    encode = None
    if spec.is_discrete:
        encode = spec.encoder if spec.encoder is not None else identity_code
    sampler = _Sampler(fn=_mechanism_fn, encode=encode)
    return sampler, (mechanism, x), (mechanism, x_prime), spec


def mechanism_streamed_bound(key, mechanism: Mechanism, x, x_prime, lam, *, n, **options) -> Bound:
    """:func:`streamed_bound` for a zoo mechanism on the pair (x, x').

    Draws ``mechanism.sample(·, x, m)`` and ``mechanism.sample(·, x', m)``; discrete outputs
    are encoded by ``mechanism.output(x)`` and use its alphabet as the support. The mechanism
    and the databases are traced, so new parameter values or databases of the same shapes
    reuse the compiled stream.

    Args:
      key, lam, n: as in :func:`streamed_bound`.
      mechanism: a :class:`rdpjax.mechanisms.Mechanism`.
      x, x_prime: adjacent databases.
      **options: the keyword options of :func:`streamed_bound` (``progress=`` included).
    """
    sampler, args_p, args_q, spec = _mechanism_samplers(mechanism, x, x_prime)
    if spec.is_discrete and options.get("support_size") is None and spec.alphabet_size:
        options["support_size"] = spec.alphabet_size
    defaults = dict(
        chunk=DEFAULT_STREAM_CHUNK, grid=None, pilot=DEFAULT_PILOT, margin=0.5, discrete=None,
        support_size=None, outside="clip", devices=None, binning="scatter", alpha=0.05,
        bandwidth=None, floor=None, beta=None, grid_size=None, both_directions=False,
        variance="autodiff", second_order=True, defaults=DEFAULTS, layout="exact",
        progress=None,
    )  # fmt: skip
    unknown = set(options) - set(defaults)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}.")
    defaults.update(options)
    return _streamed(key, (sampler, sampler), (args_p, args_q), lam, n=n, **defaults)


def streamed_samples(key, sample_p: Callable, sample_q: Callable, *, n, chunk: int):
    """The draws :func:`streamed_bound` makes with the same key, n and chunk, in memory.

    For tests and small n: memory O(n). Runs inside ``rdpjax.float64()``, as the stream does.

    Returns:
      ``(p, q)`` arrays of ``n_p`` and ``n_q`` draws.
    """
    n_p, n_q = _sizes(n)
    chunk = min(check_int(chunk, "chunk", 1), max(n_p, n_q))
    key = _as_key(key)
    impl = str(jax.random.key_impl(key))
    _, k_p, k_q = jax.random.split(key, 3)
    out = []
    with float64():
        for k, fn, m in ((k_p, sample_p, n_p), (k_q, sample_q, n_q)):
            data = np.asarray(jax.random.key_data(k))
            out.append(
                _materialize(data, (), sampler=_user_sampler(fn), n=m, chunk=chunk, impl=impl)
            )
    return tuple(out)


# ----------------------------------------------------------------------------- studies


@functools.partial(jax.jit, static_argnames=("n", "reps", "sampler", "batch_size", "mesh"))
def _replicate(plan, mechanism, xs, xs_prime, keys, *, n, reps, sampler, batch_size, mesh):
    """Bounds of ``reps`` replications on each database pair: leaves shaped (P, R, ...).
    Replication ``r`` of pair ``i`` draws from ``split(keys[i], reps)[r]``; the replications
    are split over the devices of ``mesh``, each one bounding every pair (a ``vmap``)."""

    def one(rep_keys, plan, mechanism, xs, xs_prime):
        def pair(x, x_prime, k):
            kp, kq = jax.random.split(k)
            p = sampler(kp, n, (mechanism, x))
            q = sampler(kq, n, (mechanism, x_prime))
            return plan(p, q)

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

    Each replication draws n outputs per side from the mechanism on x and x', and bounds
    ``D_λ`` for every order as :func:`rdpjax.lower_bound` does (the orders of one
    replication are simultaneous, Bonferroni). The replications are split over the devices
    (:func:`rdpjax.sharding.map_over_devices`), each device runs its share as ``lax.map`` over
    vmapped batches, and the pairs are a ``vmap``: one compilation per (n, R, P, L, layout,
    devices), reused by later calls with the same shapes (other keys, mechanism parameters or
    databases). The grid layout is planned on a pilot draw of each pair; the finest one is
    used for all pairs.

    Args:
      key: a ``jax.random`` key.
      mechanism: a :class:`rdpjax.mechanisms.Mechanism`.
      pairs: a non-empty sequence of adjacent pairs ``(x, x')``, all of the same shapes.
      lam: an order or a sequence of orders.
      n: outputs per side per replication (≥ 2).
      reps: replications per pair (≥ 1).
      batch_size: replications vmapped together on each device (default:
        :func:`rdpjax.sharding.replication_batch_size`: at most 2^17 · ⌊cores / devices⌋ /
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
    samplers = [_mechanism_samplers(mechanism, x, xp) for x, xp in pairs]
    sampler, spec = samplers[0][0], samplers[0][3]
    xs = [np.asarray(x) for x, _ in pairs]
    xps = [np.asarray(xp) for _, xp in pairs]
    if len({a.shape for a in xs + xps}) != 1:
        raise ValueError("every database of every pair must have the same shape.")
    mesh = draw_mesh(devices)
    if batch_size is None:
        batch_size = replication_batch_size(n, reps, mesh, len(pairs))
    batch_size = check_int(batch_size, "batch_size", 1)
    key = _as_key(key)
    k_pilot, k_main = jax.random.split(key)
    with float64():
        pilots = []
        for i, (_, a_p, a_q, _) in enumerate(samplers):
            kp, kq = jax.random.split(jax.random.fold_in(k_pilot, i))
            pilots.append(
                (
                    np.asarray(_pilot_draw(kp, a_p, sampler=sampler, m=n)),
                    np.asarray(_pilot_draw(kq, a_q, sampler=sampler, m=n)),
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
