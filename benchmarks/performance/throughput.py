"""Throughput, side by side: KDE against KDEpy / statsmodels / scipy, the end-to-end audit and
the streamed bound against jax.random alone, vmapped replications against a Python loop, the
memory-bandwidth floor, and the binning formulations (the GPU scatter-add hazard).

Every ratio is against a baseline run in the same process (the streamed 1e9 run and its RNG
baseline run in one child process, which also reports its peak resident memory). Timings are
the best of a few warm runs; compilation is reported separately.

    python benchmarks/performance/throughput.py          # full: KDE 1e6/1e7, stream 1e9, R=1000
    python benchmarks/performance/throughput.py --quick  # small: stream 1e8 per side, R=100
    bash benchmarks/performance/gpu.sh [--quick]         # the same on one GPU

Writes ``benchmarks/results/performance/throughput.json`` (``throughput_quick.json`` with
``--quick``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

import rdpjax
from rdpjax.estimator.binning import bin_accumulator, bin_chunk, bin_counts, linear_binning
from rdpjax.estimator.grid import Grid, grid_from_range
from rdpjax.estimator.kde import direct_kde, fft_kde, kernel_half_width
from rdpjax.estimator.sharding import (
    AXIS,
    draw_mesh,
    map_over_devices,
    replication_batch_size,
    sum_over_devices,
)
from rdpjax.stream import DEFAULT_STREAM_CHUNK, JaxSamplers, bound_of_draws, streamed_bound

ORDERS = (2.0, 5.0, 7.0)
SCALE = 5.0  # paper 000's Gaussian mechanism: P = N(1, 25), Q = N(0, 25)
RESULTS = Path(__file__).resolve().parents[1] / "results" / "performance"


def sample_p(key, m):
    return 1.0 + SCALE * jax.random.normal(key, (m,), jnp.float32)


def sample_q(key, m):
    return SCALE * jax.random.normal(key, (m,), jnp.float32)


def best_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls of ``fn`` (which must block on its result)."""
    return best_times({"fn": fn}, repeats)["fn"]


def best_times(fns: dict, repeats: int) -> dict:
    """Best wall times of functions compared with each other, their runs interleaved so that
    a change of machine load (this benchmark runs on shared machines) hits all alike."""
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: min(t) for name, t in times.items()}


def _settings_span(planned):
    """The settings and span ``bin_program`` takes, on this tree or one from before the planner."""
    draws = getattr(planned, "draws", None)
    if draws is None:  # a tree before rdpjax.estimator.planner (a side-by-side run)
        return planned.settings, planned.span
    return draws.settings(), draws.span


def block(x):
    return jax.block_until_ready(x)


# ----------------------------------------------------------------------------- KDE


def aligned(x: np.ndarray, alignment: int = 64) -> np.ndarray:
    """A copy of ``x`` whose buffer starts on an ``alignment``-byte boundary. On CPU jax takes
    such a numpy array without copying it; numpy's own large buffers start 16 bytes past one
    (glibc), and jax copies those."""
    buf = np.empty(x.nbytes + alignment, np.uint8)
    start = -buf.ctypes.data % alignment
    out = buf[start : start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


def kde_section(sizes, scipy_sizes, grid_points: int, check_points: int, repeats: int) -> list:
    """Gaussian KDE of N(0, 1) samples on one grid with one bandwidth, four implementations.

    The grid is statsmodels' (data range ± 5 bandwidths, a power of two of points), so that
    all four evaluate at the same points; errors are the max |f̂ − f| over ``check_points``
    evenly spread grid points against the direct float64 KDE (eq. (10)), relative to the peak.
    Every implementation gets the same float64 numpy array, 64-byte aligned (:func:`aligned`).
    """
    rows = []
    rng = np.random.default_rng(0)
    for n in sorted(set(sizes) | set(scipy_sizes)):
        row = kde_row(
            aligned(rng.standard_normal(n)),
            n in sizes,
            n in scipy_sizes,
            grid_points,
            check_points,
            repeats,
        )
        rows.append(row)
        print_kde_row(row)
    return rows


def kde_row(x, fft_methods: bool, scipy: bool, grid_points, check_points, repeats) -> dict:
    from KDEpy import FFTKDE
    from scipy.stats import gaussian_kde
    from statsmodels.nonparametric.kde import KDEUnivariate

    n = len(x)
    h = 1.06 * x.std() * n ** (-0.2)  # Silverman's rule, shared by all
    cut = 5.0
    a, b = x.min() - cut * h, x.max() + cut * h
    points, spacing = np.linspace(a, b, grid_points, retstep=True)
    check = np.linspace(0, grid_points - 1, check_points).astype(int)
    with rdpjax.float64():
        ref = np.asarray(
            direct_kde(jnp.asarray(x), jnp.asarray(points[check]), h, chunk_size=2**14)
        )
    peak = ref.max()

    def err(f):
        return float(np.max(np.abs(np.asarray(f)[check] - ref)) / peak)

    row = {"n": n, "bandwidth": h, "grid_points": grid_points, "methods": {}}
    if fft_methods:
        grid = Grid(low=np.array([a]), spacing=np.array([spacing]), shape=(grid_points,))
        half = kernel_half_width(h, spacing, 5.0)
        # Every device bins one block of the samples (linear_binning's mesh): on a CPU with
        # one jax device per core, every core scatters. The samples are handed to jax split
        # that way; from an aligned numpy array this takes no copy.
        mesh = draw_mesh(None if n % len(jax.devices()) == 0 else 1)
        split = NamedSharding(mesh, PartitionSpec(AXIS))

        @jax.jit
        def rdp(xs):
            counts, _ = linear_binning(xs, grid, chunk_size=2**16, mesh=mesh)
            return fft_kde(counts, grid, jnp.array([h]), half)

        def sm():
            k = KDEUnivariate(x)
            k.fit(kernel="gau", bw=h, fft=True, gridsize=grid_points, cut=cut)
            return k

        unaligned = aligned(np.zeros(n + 1))[1:]  # 8 bytes past a boundary: jax copies it
        unaligned[...] = x
        with rdpjax.float64():
            t0 = time.perf_counter()
            block(rdp(jax.device_put(x, split)))
            first = time.perf_counter() - t0
            xd = block(jax.device_put(x.copy(), split))
            k = sm()
            assert np.allclose(k.support, points)
            errors = {
                "rdpjax": err(rdp(xd)),
                "KDEpy": err(FFTKDE(kernel="gaussian", bw=h).fit(x).evaluate(points)),
                "statsmodels": err(k.density),
            }
            t = best_times(
                {
                    "rdpjax": lambda: block(rdp(jax.device_put(x, split))),  # incl. hand-over
                    "rdpjax_unaligned": lambda: block(rdp(jax.device_put(unaligned, split))),
                    "rdpjax_device": lambda: block(rdp(xd)),
                    "KDEpy": lambda: FFTKDE(kernel="gaussian", bw=h).fit(x).evaluate(points),
                    "statsmodels": sm,
                },
                repeats,
            )
        row["methods"]["rdpjax"] = {
            "seconds": t["rdpjax"],
            "seconds_from_unaligned_numpy": t["rdpjax_unaligned"],
            "seconds_on_device_data": t["rdpjax_device"],
            "first_call_seconds": first,
            "devices": mesh.size,
            "max_rel_error": errors["rdpjax"],
        }
        for name in ("KDEpy", "statsmodels"):
            row["methods"][name] = {"seconds": t[name], "max_rel_error": errors[name]}
    if scipy:
        kde = gaussian_kde(x, bw_method=h / x.std(ddof=1))
        t0 = time.perf_counter()
        f = kde(points)
        row["methods"]["scipy"] = {"seconds": time.perf_counter() - t0, "max_rel_error": err(f)}
    base = row["methods"].get("KDEpy")
    for m in row["methods"].values():
        m["speedup_vs_KDEpy"] = base["seconds"] / m["seconds"] if base else None
    return row


def print_kde_row(row):
    for name, m in row["methods"].items():
        speed = m["speedup_vs_KDEpy"]
        print(
            f"  kde n={row['n']:>9,}  {name:<12} {m['seconds']:9.4f} s  "
            f"{'' if speed is None else f'{speed:6.2f}× KDEpy':>13}  "
            f"max rel error {m['max_rel_error']:.2e}"
            + (
                f"  (on {m['devices']} device(s); from an unaligned array "
                f"{m['seconds_from_unaligned_numpy']:.4f} s, on data already in jax "
                f"{m['seconds_on_device_data']:.4f} s)"
                if name == "rdpjax"
                else ""
            ),
            flush=True,
        )


def whole_bound_section(n: int, grid_points: int, repeats: int) -> dict:
    """The whole in-memory bound against a KDE library's two KDEs alone.

    ``rdpjax.lower_bound(p, q, [2, 5, 7])`` on numpy float32 samples (as a user holds them:
    every check, the copy to jax, the settings, the binning, both KDEs, the divergence, its
    variance and second-order terms at three orders) against KDEpy's ``FFTKDE`` of the same two
    samples on ``grid_points`` points at the bound's own bandwidth, given float64 copies made
    outside the timing (its faster input). The bound's pieces are timed too: the host-side
    plan (checks, extremes, copy, settings), the binning and the bound on the grid.
    """
    from KDEpy import FFTKDE

    from rdpjax.estimator import api, from_samples

    key = jax.random.key(7)
    p = np.asarray(sample_p(jax.random.fold_in(key, 1), n))
    q = np.asarray(sample_q(key, n))
    p64, q64 = p.astype(np.float64), q.astype(np.float64)
    first = time.perf_counter()
    bound = rdpjax.lower_bound(p, q, ORDERS)
    first = time.perf_counter() - first
    h = float(bound.bandwidth[0])

    def kdepy():
        return [FFTKDE(kernel="gaussian", bw=h).fit(x).evaluate(grid_points) for x in (p64, q64)]

    mesh = api.binning_mesh()  # lower_bound's: every local device
    options = dict(
        pad=True, alpha=0.05, both_directions=False, options=rdpjax.BoundOptions(transform=None),
        mesh=mesh,
    )  # fmt: skip
    with rdpjax.float64():
        planned = from_samples.plan_samples(p, q, ORDERS, **options)
        settings, span = _settings_span(planned)
        binned = api.bin_program(
            planned.plan, planned.p, planned.q, planned.n_p, planned.n_q, settings, span, mesh
        )

        def plan_only():
            with rdpjax.float64():
                return block(from_samples.plan_samples(p, q, ORDERS, **options).p)

        def bin_only():
            with rdpjax.float64():
                return block(
                    api.bin_program(
                        planned.plan,
                        planned.p,
                        planned.q,
                        planned.n_p,
                        planned.n_q,
                        settings,
                        span,
                        mesh,
                    )
                )

        def bound_only():
            with rdpjax.float64():
                return block(api.bound_program(planned.plan, binned))

        t = best_times(
            {
                "lower_bound": lambda: rdpjax.lower_bound(p, q, ORDERS),
                "lower_bound_no_map": lambda: rdpjax.lower_bound(p, q, ORDERS, transform=None),
                "KDEpy_two_kdes": kdepy,
                "plan": plan_only,
                "binning": bin_only,
                "bound_on_grid": bound_only,
            },
            repeats,
        )
    out = {"n": n, "orders": ORDERS, "grid_points_KDEpy": grid_points, "bandwidth": h}
    out["grid_points_rdpjax"] = list(planned.plan.shape)
    out["binning_devices"] = 1 if mesh is None else mesh.size
    out["first_call_seconds"] = first
    out.update({f"{name}_seconds": seconds for name, seconds in t.items()})
    out["KDEpy_over_lower_bound"] = t["KDEpy_two_kdes"] / t["lower_bound"]
    # What every bound runs whatever the map: the binning of both samples and the bound on the
    # grid. KDEpy's time over theirs is the most the whole bound could reach with these kernels.
    out["kernels_seconds"] = t["binning"] + t["bound_on_grid"]
    out["KDEpy_over_kernels"] = t["KDEpy_two_kdes"] / out["kernels_seconds"]
    out["KDEpy_over_lower_bound_no_map"] = t["KDEpy_two_kdes"] / t["lower_bound_no_map"]
    out["lower"] = bound.lower.tolist()
    print(
        f"  n={n:,}/side float32: lower_bound {t['lower_bound']:.3f} s (plan {t['plan']:.3f}, "
        f"binning on {out['binning_devices']} device(s) {t['binning']:.3f}, bound on "
        f"{planned.plan.shape[0]:,} points "
        f"{t['bound_on_grid']:.3f}) | KDEpy's two KDEs alone on {grid_points:,} points "
        f"{t['KDEpy_two_kdes']:.3f} s → the whole bound {out['KDEpy_over_lower_bound']:.2f}× "
        "faster",
        flush=True,
    )
    print(
        f"    transform=None {t['lower_bound_no_map']:.3f} s "
        f"({out['KDEpy_over_lower_bound_no_map']:.2f}× KDEpy); binning + bound on the grid alone "
        f"{out['kernels_seconds']:.3f} s: at most {out['KDEpy_over_kernels']:.2f}× KDEpy with "
        "these kernels",
        flush=True,
    )
    return out


# ----------------------------------------------------------------------------- RNG baseline


@functools.partial(jax.jit, static_argnames=("n", "chunk", "mesh"))
def rng_only(key_data, *, n: int, chunk: int, mesh):
    """The draws of ``streamed_bound`` (same keys, same chunks, dealt to the devices of ``mesh``
    the same way), reduced by a sum only."""
    key = jax.random.wrap_key_data(key_data)
    _, k_p, k_q = jax.random.split(key, 3)
    full, rest = divmod(n, chunk)

    def draw(k_p, k_q, i, m):
        x = sample_p(jax.random.fold_in(k_p, i), m)
        y = sample_q(jax.random.fold_in(k_q, i), m)
        return jnp.sum(x) + jnp.sum(y)

    def task(ids, kd_p, kd_q):
        k_p, k_q = jax.random.wrap_key_data(kd_p), jax.random.wrap_key_data(kd_q)

        def step(acc, i):
            total = draw(k_p, k_q, i, chunk)
            if ids.shape[0] * mesh.size == full:  # no padding chunks
                return acc + total, None
            return acc + jnp.where(i < full, total, 0.0), None  # drawn and masked, as there

        return lax.scan(step, jnp.float32(0), ids)[0]

    data = (jax.random.key_data(k_p), jax.random.key_data(k_q))
    total = sum_over_devices(task, full, mesh, *data) if full else jnp.float32(0)
    return total + (draw(k_p, k_q, full, rest) if rest else 0.0)


def rng_baseline(key, n: int, chunk: int) -> dict:
    """Compiled ``rng_only`` on one device and on every device (compiled ahead of time, so no
    call includes compilation), as functions that block on their result. The RNG time is the
    faster of the two (``jax.random`` on one CPU device already runs on every core)."""
    key_data = np.asarray(jax.random.key_data(key))
    fns = {}
    for name, devices in (("rng_one_device", 1), ("rng_all_devices", None)):
        with rdpjax.float64():
            fn = rng_only.lower(key_data, n=n, chunk=chunk, mesh=draw_mesh(devices)).compile()

        def run(fn=fn):
            with rdpjax.float64():
                return block(fn(key_data))

        fns[name] = run
    return fns


def rng_seconds(out: dict) -> float:
    """The RNG baseline of ``out``: the faster of one device and every device."""
    return min(out["rng_one_device_seconds"], out["rng_all_devices_seconds"])


def audit_section(n: int, chunk: int, repeats: int) -> dict:
    """End-to-end audit (both sides, λ = 2, 5, 7) against jax.random alone."""
    key = jax.random.key(0)
    out = {"n": n, "chunk": chunk, "orders": ORDERS}

    rng = rng_baseline(key, n, chunk)

    def stream():
        return streamed_bound(key, JaxSamplers(sample_p, sample_q), ORDERS, n=n, chunk=chunk)

    draw = jax.jit(lambda k: (sample_p(jax.random.fold_in(k, 1), n), sample_q(k, n)))

    def in_memory():
        p, q = draw(key)
        return rdpjax.lower_bound(p, q, ORDERS)

    for name, fn in (("streamed", stream), ("in_memory", in_memory)):
        t0 = time.perf_counter()
        result = fn()
        out[f"{name}_first_call_seconds"] = time.perf_counter() - t0
        if name == "streamed":
            out["streamed_lower"] = result.lower.tolist()
    t = best_times({**rng, "streamed": stream, "in_memory": in_memory}, repeats)
    for name, seconds in t.items():
        out[f"{name}_seconds"] = seconds
    out["rng_seconds"] = rng_seconds(out)
    out["streamed_over_rng"] = out["streamed_seconds"] / out["rng_seconds"]
    out["in_memory_over_rng"] = out["in_memory_seconds"] / out["rng_seconds"]
    out["exact"] = [lam / (2 * SCALE**2) for lam in ORDERS]
    parts = streamed_parts(stream, repeats)
    out["streamed_parts_seconds"] = parts
    out["scan_and_bound_over_rng"] = (parts["scan"] + parts["bound"]) / out["rng_seconds"]
    print(
        f"  audit n={n:,}/side  jax.random alone {out['rng_seconds']:.3f} s | streamed bound "
        f"{out['streamed_seconds']:.3f} s ({out['streamed_over_rng']:.2f}× RNG) | in-memory "
        f"lower_bound {out['in_memory_seconds']:.3f} s ({out['in_memory_over_rng']:.2f}× RNG)",
        flush=True,
    )
    print(
        f"    streamed parts: pilot and settings {parts['settings']:.3f} s, draw-and-bin scan "
        f"{parts['scan']:.3f} s, bound on the grid {parts['bound']:.3f} s; the scan and the bound "
        f"alone {out['scan_and_bound_over_rng']:.2f}× RNG",
        flush=True,
    )
    return out


def streamed_parts(stream, repeats: int) -> dict:
    """The best time of each step of ``stream()`` over ``repeats`` calls: the pilot → settings
    step, the draw-and-bin scan and the counts → bound step, timed by wrapping the driver's
    three calls (each returns host values, so each time includes its device work)."""
    from rdpjax.stream import driver, sources

    best = {"settings": np.inf, "scan": np.inf, "bound": np.inf}
    saved = driver.fix_settings, sources.JaxSource.tally, driver.bound_from_counts

    def timed(name, fn):
        def run(*args, **kwargs):
            start = time.perf_counter()
            result = fn(*args, **kwargs)
            best[name] = min(best[name], time.perf_counter() - start)
            return result

        return run

    driver.fix_settings = timed("settings", saved[0])
    sources.JaxSource.tally = timed("scan", saved[1])
    driver.bound_from_counts = timed("bound", saved[2])
    try:
        for _ in range(repeats):
            stream()
    finally:
        driver.fix_settings, sources.JaxSource.tally, driver.bound_from_counts = saved
    return best


# ----------------------------------------------------------------------------- streamed 1e9


def peak_rss_mb() -> float:
    """Peak resident memory of this process: VmHWM (Linux; reset by exec, unlike ru_maxrss,
    which a child inherits from the process that forked it), else ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def stream_child(n: int, chunk: int, binning: str) -> dict:
    """Runs in a fresh process: RNG alone, then the streamed bound, then peak RSS."""
    import collections

    compile_s = collections.Counter()

    def listen(event, duration, **kw):  # tracing, lowering and XLA compilation
        if event.startswith("/jax/core/compile/"):
            compile_s["total"] += duration

    jax.monitoring.register_event_duration_secs_listener(listen)
    key = jax.random.key(1)
    out = {"n": n, "chunk": chunk, "binning": binning}
    out["rss_after_import_mb"] = peak_rss_mb()
    out["devices"] = len(jax.devices())
    rng = rng_baseline(key, n, chunk)
    rng_times = best_times(rng, 1)
    compile_s.clear()
    t0 = time.perf_counter()
    bound = streamed_bound(
        key, JaxSamplers(sample_p, sample_q), ORDERS, n=n, chunk=chunk, binning=binning
    )
    out["streamed_seconds"] = time.perf_counter() - t0
    out["streamed_compile_seconds"] = compile_s["total"]
    out["streamed_seconds_excluding_compile"] = out["streamed_seconds"] - compile_s["total"]
    # Steady state: the same call again (same key, so the same grid and every compiled
    # function reused), against the RNG alone run again.
    t0 = time.perf_counter()
    again = streamed_bound(
        key, JaxSamplers(sample_p, sample_q), ORDERS, n=n, chunk=chunk, binning=binning
    )
    out["streamed_second_call_seconds"] = time.perf_counter() - t0
    out["second_call_same_lower"] = bool(np.array_equal(again.lower, bound.lower))
    for name, seconds in best_times(rng, 1).items():
        out[f"{name}_seconds"] = min(rng_times[name], seconds)
    out["rng_seconds"] = rng_seconds(out)
    out["peak_rss_mb"] = peak_rss_mb()
    stats = jax.devices()[0].memory_stats() or {}
    if "peak_bytes_in_use" in stats:
        out["device_peak_mb"] = stats["peak_bytes_in_use"] / 2**20
    out["lower"] = bound.lower.tolist()
    out["estimate"] = bound.estimate.tolist()
    out["outside"] = bound.outside.tolist()
    out["grid_shape"] = list(bound.grid_shape)
    return out


def stream_section(n: int, chunk: int, binning: str, cpu_devices: int) -> dict:
    cmd = [sys.executable, __file__, "--stream-child", str(n), "--chunk", str(chunk)]
    cmd += ["--binning", binning, "--cpu-devices", str(cpu_devices)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(run.stderr[-4000:])
    out = json.loads(run.stdout.strip().splitlines()[-1])
    out["streamed_over_rng"] = out["streamed_seconds"] / out["rng_seconds"]
    out["streamed_over_rng_excluding_compile"] = (
        out["streamed_seconds_excluding_compile"] / out["rng_seconds"]
    )
    out["streamed_second_call_over_rng"] = out["streamed_second_call_seconds"] / out["rng_seconds"]
    print(
        f"  stream n={n:,}/side  jax.random alone {out['rng_seconds']:.3f} s | streamed bound "
        f"{out['streamed_seconds']:.1f} s incl. {out['streamed_compile_seconds']:.1f} s "
        f"compilation ({out['streamed_over_rng']:.2f}× RNG; "
        f"{out['streamed_over_rng_excluding_compile']:.2f}× without compilation; second call "
        f"{out['streamed_second_call_seconds']:.2f} s = "
        f"{out['streamed_second_call_over_rng']:.2f}× RNG) | peak RSS "
        f"{out['peak_rss_mb']:.0f} MB (after import {out['rss_after_import_mb']:.0f} MB)",
        flush=True,
    )
    return out


# ----------------------------------------------------------------------------- vmapped studies


def vmap_section(n: int, reps: int, repeats: int) -> dict:
    """R replications at n per side: one compiled call (the replications split over the devices,
    vmapped in small batches on each: ``map_over_devices``, as ``replicated_bounds`` and
    ``coverage`` run them), the same on one device, and a Python loop over the jitted single
    replication (the same function). Also the draws alone, laid out as the first call: the part
    of it that no faster bound would remove."""
    key = jax.random.key(2)
    with rdpjax.float64():
        k0p, k0q = jax.random.split(jax.random.fold_in(key, 99))
        plan, _, _ = rdpjax.plan_bound(sample_p(k0p, n), sample_q(k0q, n), ORDERS)

        def one(k):
            kp, kq = jax.random.split(k)
            b = bound_of_draws(plan, sample_p(kp, n), sample_q(kq, n))
            return b.lower

        def draws(k):
            kp, kq = jax.random.split(k)
            return jnp.sum(sample_p(kp, n)) + jnp.sum(sample_q(kq, n))

        single = jax.jit(one)
        meshes = {"vmapped": draw_mesh(), "vmapped_one_device": draw_mesh(1)}
        batches = {name: replication_batch_size(n, reps, m) for name, m in meshes.items()}
        studies = {
            name: jax.jit(
                lambda keys, f=f, m=meshes[like], b=batches[like]: map_over_devices(
                    f, m, keys, batch_size=b
                )
            )
            for name, f, like in (
                ("vmapped", one, "vmapped"),
                ("vmapped_one_device", one, "vmapped_one_device"),
                ("draws_vmapped", draws, "vmapped"),
            )
        }
        keys = jax.random.split(key, reps)
        out = {"n": n, "reps": reps, "devices": len(jax.devices()), "grid_shape": list(plan.shape)}
        out["batch_size_per_device"] = batches
        for name, fn in (*studies.items(), ("loop", single)):
            t0 = time.perf_counter()
            block(fn(keys) if name in studies else fn(keys[0]))
            out[f"{name}_first_call_seconds"] = time.perf_counter() - t0
        t = best_times(
            {
                **{name: (lambda f=f: block(f(keys))) for name, f in studies.items()},
                "loop": lambda: block([single(k) for k in keys]),
            },
            repeats,
        )
        for name, seconds in t.items():
            out[f"{name}_seconds"] = seconds
        vm = np.asarray(studies["vmapped"](keys))
        lp = np.stack([np.asarray(single(k)) for k in keys[:5]])
        out["max_abs_difference_first_5"] = float(np.max(np.abs(vm[:5] - lp)))
    out["loop_over_vmapped"] = out["loop_seconds"] / out["vmapped_seconds"]
    out["loop_over_vmapped_one_device"] = out["loop_seconds"] / out["vmapped_one_device_seconds"]
    out["loop_over_draws_vmapped"] = out["loop_seconds"] / out["draws_vmapped_seconds"]
    out["vmapped_over_draws_vmapped"] = out["vmapped_seconds"] / out["draws_vmapped_seconds"]
    print(
        f"  R={reps} n={n:,}: loop {out['loop_seconds']:.2f} s | one call, {out['devices']} "
        f"devices {out['vmapped_seconds']:.2f} s → {out['loop_over_vmapped']:.2f}× | one call, "
        f"one device {out['vmapped_one_device_seconds']:.2f} s → "
        f"{out['loop_over_vmapped_one_device']:.2f}× (batches {batches}) | the draws alone, "
        f"laid out as the first, {out['draws_vmapped_seconds']:.2f} s (one call / draws "
        f"{out['vmapped_over_draws_vmapped']:.2f}×, loop / draws "
        f"{out['loop_over_draws_vmapped']:.2f}×)",
        flush=True,
    )
    return out


# ----------------------------------------------------------------------------- floors


def bandwidth_section(n: int, repeats: int) -> dict:
    """One pass over n float32: the memory-bandwidth floor of any O(n) step."""
    x = block(jnp.ones((n,), jnp.float32))
    total = jax.jit(jnp.sum)
    block(total(x))
    t = best_time(lambda: block(total(x)), repeats)
    xh = np.ones(n, np.float32)
    t_np = best_time(lambda: xh.sum(), repeats)
    out = {
        "n": n,
        "jax_seconds": t,
        "jax_gb_per_s": 4 * n / t / 1e9,
        "numpy_seconds": t_np,
        "numpy_gb_per_s": 4 * n / t_np / 1e9,
        "ns_per_float32": t / n * 1e9,
    }
    print(
        f"  memory floor: one pass over {n:.0e} float32 {t * 1e3:.1f} ms "
        f"({out['jax_gb_per_s']:.1f} GB/s jax, {out['numpy_gb_per_s']:.1f} GB/s numpy)",
        flush=True,
    )
    return out


def binning_section(chunk: int, repeats: int) -> dict:
    """Scatter-add against sort-based binning of one chunk onto a 32k-point grid.

    On GPUs with jaxlib 0.10.2–0.11 the scatter-add can fall back to a compare-and-swap retry
    loop under index contention (openxla/xla#46225); if it is slower than the sort here, pass
    ``binning="sort"`` to :func:`rdpjax.stream.streamed_bound`.
    """
    out = {"chunk": chunk}
    with rdpjax.float64():
        x = block(SCALE * jax.random.normal(jax.random.key(3), (chunk, 1), jnp.float32))
        grid = grid_from_range(jnp.array([-30.0]), jnp.array([30.0]), (32768,), (80,))
        zero = (bin_accumulator(grid), jnp.zeros((), jnp.float64))
        results = {}
        for method in ("scatter", "sort"):
            fn = jax.jit(functools.partial(bin_chunk, grid=grid, method=method))
            results[method] = np.asarray(bin_counts(block(fn(*zero, x))[0], grid))
            out[f"{method}_ns_per_sample"] = (
                best_time(lambda fn=fn: block(fn(*zero, x)), repeats) / chunk * 1e9
            )
        # A contended case: every sample in one cell (the pattern of the GPU regression).
        same = jnp.full((chunk, 1), 0.123, jnp.float32)
        fn = jax.jit(functools.partial(bin_chunk, grid=grid, method="scatter"))
        block(fn(*zero, same))
        out["scatter_contended_ns_per_sample"] = (
            best_time(lambda: block(fn(*zero, same)), repeats) / chunk * 1e9
        )
        rng = jax.jit(lambda k: SCALE * jax.random.normal(k, (chunk,), jnp.float32))
        block(rng(jax.random.key(4)))
        out["rng_ns_per_sample"] = (
            best_time(lambda: block(rng(jax.random.key(4))), repeats) / chunk * 1e9
        )
    out["max_abs_difference"] = float(np.max(np.abs(results["scatter"] - results["sort"])))
    out["scatter_slower_than_sort"] = out["scatter_ns_per_sample"] > out["sort_ns_per_sample"]
    out["recommended_binning"] = "sort" if out["scatter_slower_than_sort"] else "scatter"
    print(
        f"  binning per sample: scatter {out['scatter_ns_per_sample']:.1f} ns (all in one cell "
        f"{out['scatter_contended_ns_per_sample']:.1f} ns), sort {out['sort_ns_per_sample']:.1f} "
        f"ns, jax.random.normal {out['rng_ns_per_sample']:.1f} ns → use "
        f"binning='{out['recommended_binning']}'",
        flush=True,
    )
    return out


# ----------------------------------------------------------------------------- report


def targets(res: dict) -> dict:
    kde = {row["n"]: row["methods"] for row in res["kde"]}
    n_top = max(kde)
    top = kde[n_top]
    r, k = top["rdpjax"], top["KDEpy"]
    stream = res["stream"]
    return {
        f"kde_3x_faster_than_KDEpy_at_{n_top:.0e}_with_no_larger_error": bool(
            r["speedup_vs_KDEpy"] >= 3 and r["max_rel_error"] <= k["max_rel_error"]
        ),
        f"whole_bound_3x_faster_than_KDEpy_two_kdes_at_{res['whole_bound']['n']:.0e}": bool(
            res["whole_bound"]["KDEpy_over_lower_bound"] >= 3
        ),
        "audit_at_most_1.5x_rng": bool(res["audit"]["streamed_over_rng"] <= 1.5),
        "replications_at_most_2x_their_draws": bool(res["vmap"]["vmapped_over_draws_vmapped"] <= 2),
        f"stream_{stream['n']:.0e}_at_most_2x_rng_second_call": bool(
            stream["streamed_second_call_over_rng"] <= 2
        ),
        f"stream_{stream['n']:.0e}_peak_rss_below_1GB": bool(stream["peak_rss_mb"] < 1024),
        "vmapped_5x_faster_than_loop": bool(res["vmap"]["loop_over_vmapped"] >= 5),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (minutes on a laptop)")
    parser.add_argument("--out", type=Path, default=None, help="JSON path")
    parser.add_argument("--binning", default="scatter", choices=("scatter", "sort"))
    parser.add_argument("--chunk", type=int, default=DEFAULT_STREAM_CHUNK, help="stream chunk")
    parser.add_argument(
        "--cpu-devices",
        type=int,
        default=os.cpu_count(),
        help="CPU devices for jax (jax_num_cpu_devices; default: one per core). The streamed "
        "bound deals its chunks to all of them; the RNG baseline is the faster of one and all.",
    )
    parser.add_argument("--stream-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    jax.config.update("jax_num_cpu_devices", args.cpu_devices)  # before the first computation
    if args.stream_child is not None:
        print(json.dumps(stream_child(args.stream_child, args.chunk, args.binning)))
        return
    quick = args.quick
    out_path = args.out or RESULTS / ("throughput_quick.json" if quick else "throughput.json")
    command = "python benchmarks/performance/throughput.py" + (" --quick" if quick else "")
    if args.binning != "scatter":
        command += f" --binning {args.binning}"
    if args.chunk != DEFAULT_STREAM_CHUNK:
        command += f" --chunk {args.chunk}"
    if args.cpu_devices != os.cpu_count():
        command += f" --cpu-devices {args.cpu_devices}"
    if args.out:
        command += f" --out {args.out}"
    device = jax.devices()[0]
    print(
        f"rdpjax throughput on {len(jax.devices())} × {device.platform} ({device.device_kind}), "
        f"jax {jax.__version__}; the streamed bound uses every device, jax.random alone is "
        "timed on one and on all (the faster counts)"
    )
    res = {
        "command": command,
        "quick": quick,
        "platform": device.platform,
        "device": device.device_kind,
        "devices": len(jax.devices()),
        "cpu_devices": args.cpu_devices,
        "jax": jax.__version__,
        "cpu_count": os.cpu_count(),
        "load_average_at_start": list(os.getloadavg()),
        "machine": platform.platform(),
    }
    repeats = 2 if quick else 3
    # The whole bound and the audit take well under a second a round: more rounds, so that the
    # best of them is less at the mercy of a shared machine (every variant gets the same number).
    short_repeats = 3 * repeats
    print("KDE (same grid and bandwidth; error vs direct float64 KDE, relative to the peak):")
    res["kde"] = kde_section(
        sizes=(10**6, 10**7),
        scipy_sizes=(10**4,) if quick else (10**4, 10**5),
        grid_points=2**13,
        check_points=32,
        repeats=repeats,
    )
    print("The whole bound in memory (λ = 2, 5, 7) against KDEpy's two KDEs:")
    res["whole_bound"] = whole_bound_section(10**6 if quick else 10**7, 2**14, short_repeats)
    print("End-to-end audit (λ = 2, 5, 7):")
    res["audit"] = audit_section(10**6 if quick else 10**7, args.chunk, short_repeats)
    print("Streamed bound (child process):")
    res["stream"] = stream_section(
        10**8 if quick else 10**9, args.chunk, args.binning, args.cpu_devices
    )
    print("Replications:")
    res["vmap"] = vmap_section(10**5, 100 if quick else 1000, 1 if quick else 2)
    print("Floors:")
    res["bandwidth"] = bandwidth_section(10**8, repeats)
    res["binning"] = binning_section(max(args.chunk, 2**20), repeats)
    res["targets"] = targets(res)
    res["load_average_at_end"] = list(os.getloadavg())
    print("Targets:")
    for name, met in res["targets"].items():
        print(f"  {name}: {'met' if met else 'NOT met'}")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out_path}\nreproduce: {command}")


if __name__ == "__main__":
    main()
