"""Peak memory and time of audits at large n: the zoo stream at 1e9 per side and a numpy black
box at 1e8 per side, each against its random number generator alone, in the same process; and
the cost of the streamed bound's progress reports.

Each case runs in a fresh child process (this parent imports neither jax nor numpy), so its peak
resident memory, ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (and ``VmHWM``, which exec resets),
is its own:

* ``stream``: ``rdpjax.stream.mechanism_streamed_bound(key, Gaussian(5.0), x, x', [2, 5, 7],
  n=1e9, both_directions=True)`` on ``rdpjax.mechanisms.databases.paper_pair()``, one jax CPU device
  per core; the time of a second call (everything compiled), against ``jax.random`` alone drawing
  the same 2e9 float64 normals (same keys and chunks, dealt to the devices the same way, reduced
  by a sum: ``benchmarks/performance/throughput.py``'s baseline with the mechanism's sampler), the
  faster of
  one device and all; bounds against the exact λ/50.
* ``audit``: the same through the front door, ``rdpjax.audit(Gaussian(5.0), x, x', [2, 5, 7],
  n=1e9, key=…)``, which must choose the streamed route by itself (same key, so the same draws
  and bounds as ``stream``).
* ``blackbox``: ``rdpjax.stream.streamed_bound` on a `BlackBox`` on the numpy black box ``x.sum() +
  5 * rng.standard_normal(m)`` at n = 1e8 per side (batches of 1e6), against numpy drawing the 2e8
  normals alone (same batches) and the black box alone.
* ``progress``: the stream of ``stream`` at n = 1e8 per side with and without ``progress=``
  (a callable that appends ``done`` to a list): 8 pairs of runs in ABBA order, the median
  ratio of a pair (the machine this ran on is shared; the best of each is reported too).

    python benchmarks/performance/audit_memory.py           # full (≈ 4 min on 2 cores)
    python benchmarks/performance/audit_memory.py --quick   # n = 1e7 / 1e6 / 1e6, a smoke run

Writes ``benchmarks/results/performance/audit_memory.json`` (``audit_memory_quick.json`` with
``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "performance"
ORDERS = (2.0, 5.0, 7.0)
SCALE = 5.0
SIZES = {  # n per side, full and quick
    "stream": (10**9, 10**7),
    "audit": (10**9, 10**7),
    "blackbox": (10**8, 10**6),
    "progress": (10**8, 10**6),
}
BATCH = 10**6
PROGRESS_REPEATS = 8


def peak_rss_mb() -> dict:
    """Peak resident memory of this process: ``ru_maxrss`` and, on Linux, ``VmHWM``."""
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    out = {"ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                out["vmhwm_mb"] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


# ----------------------------------------------------------------------------- children


def _stream_setup():
    import jax

    # as benchmarks/performance/throughput.py
    jax.config.update("jax_num_cpu_devices", os.cpu_count())
    import rdpjax

    x, x_prime = rdpjax.mechanisms.databases.paper_pair()
    return rdpjax.mechanisms.Gaussian(SCALE), x, x_prime


def _rng_baseline(mechanism, x, x_prime, n: int, chunk: int):
    """The draws of ``mechanism_streamed_bound`` alone (throughput.py's ``rng_only`` with the
    mechanism's sampler), compiled ahead, on one device and on all: blocking callables."""
    import functools

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    import rdpjax
    from rdpjax.estimator.sharding import draw_mesh, sum_over_devices

    @functools.partial(jax.jit, static_argnames=("mesh",))
    def rng_only(key_data, mechanism, x, x_prime, *, mesh):
        _, k_p, k_q = jax.random.split(jax.random.wrap_key_data(key_data), 3)
        full, rest = divmod(n, chunk)

        def draw(kd_p, kd_q, i, m):
            k_p, k_q = jax.random.wrap_key_data(kd_p), jax.random.wrap_key_data(kd_q)
            a = mechanism._sample(jax.random.fold_in(k_p, i), x, m)
            b = mechanism._sample(jax.random.fold_in(k_q, i), x_prime, m)
            return jnp.sum(a) + jnp.sum(b)

        def task(ids, kd_p, kd_q):
            def step(acc, i):
                total = draw(kd_p, kd_q, i, chunk)
                if ids.shape[0] * mesh.size == full:
                    return acc + total, None
                return acc + jnp.where(i < full, total, 0.0), None  # drawn and masked, as there

            return lax.scan(step, jnp.zeros(()), ids)[0]

        data = (jax.random.key_data(k_p), jax.random.key_data(k_q))
        total = sum_over_devices(task, full, mesh, *data)
        return total + (draw(*data, full, rest) if rest else 0.0)

    key_data = np.asarray(jax.random.key_data(jax.random.key(1)))
    fns = {}
    for name, devices in (("rng_one_device", 1), ("rng_all_devices", None)):
        with rdpjax.float64():  # the stream draws in float64 scope: float64 normals
            compiled = rng_only.lower(
                key_data, mechanism, x, x_prime, mesh=draw_mesh(devices)
            ).compile()

        def run(compiled=compiled):
            with rdpjax.float64():
                return jax.block_until_ready(compiled(key_data, mechanism, x, x_prime))

        fns[name] = run
    return fns


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def stream_child(n: int, *, via_audit: bool = False) -> dict:
    mechanism, x, x_prime = _stream_setup()
    out = {"rss_after_import": peak_rss_mb()}
    import jax

    import rdpjax
    from rdpjax.stream import DEFAULT_STREAM_CHUNK, MechanismPair, streamed_bound

    out["devices"] = len(jax.devices())
    rng = _rng_baseline(mechanism, x, x_prime, n, DEFAULT_STREAM_CHUNK)
    rng_times = {name: [_timed(fn)] for name, fn in rng.items()}

    def stream():
        if via_audit:  # the front door: rdpjax.audit streams this n by itself (same key, draws)
            return rdpjax.audit(
                jax.random.key(1), mechanism, x, x_prime, list(ORDERS), n=n, progress=False
            ).bound
        return streamed_bound(
            jax.random.key(1),
            MechanismPair(mechanism, x, x_prime),
            list(ORDERS),
            n=n,
            both_directions=True,
        )

    t0 = time.perf_counter()
    bound = stream()
    out["first_call_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = stream()
    out["second_call_seconds"] = time.perf_counter() - t0
    out["second_call_same_lower"] = bool((again.lower == bound.lower).all())
    for name, fn in rng.items():
        rng_times[name].append(_timed(fn))
    for name, times in rng_times.items():
        out[f"{name}_seconds"] = min(times)
    out["rng_seconds"] = min(out["rng_one_device_seconds"], out["rng_all_devices_seconds"])
    out["second_call_over_rng"] = out["second_call_seconds"] / out["rng_seconds"]
    out["peak"] = peak_rss_mb()
    out["lower"] = bound.lower.tolist()
    out["estimate"] = bound.estimate.tolist()
    out["exact"] = [lam / (2 * SCALE**2) for lam in ORDERS]
    out["outside"] = bound.outside.tolist()
    out["grid_shape"] = list(bound.grid_shape)
    return out


def blackbox_child(n: int) -> dict:
    import numpy as np

    out = {}
    import jax

    import rdpjax
    from rdpjax.stream import BlackBox, streamed_bound

    out["rss_after_import"] = peak_rss_mb()
    out["devices"] = len(jax.devices())
    x, x_prime = (np.asarray(a, np.float64) for a in rdpjax.mechanisms.databases.paper_pair())

    def noisy_sum(rng, database, m):
        return database.sum() + SCALE * rng.standard_normal(m)

    def numpy_alone():  # the same 2n normals in the same batches, nothing kept
        rng = np.random.default_rng(0)
        for _ in range(2 * n // BATCH):
            rng.standard_normal(BATCH)

    def blackbox_alone():
        rng = np.random.default_rng(0)
        for db in (x, x_prime):
            for _ in range(n // BATCH):
                noisy_sum(rng, db, BATCH)

    def bound():
        return streamed_bound(
            jax.random.key(2), BlackBox(noisy_sum, x, x_prime), list(ORDERS), n=n, batch_size=BATCH,
            both_directions=True,
        )  # fmt: skip

    base = {
        "numpy_seconds": [_timed(numpy_alone)],
        "blackbox_alone_seconds": [_timed(blackbox_alone)],
    }
    t0 = time.perf_counter()
    result = bound()
    out["first_call_seconds"] = time.perf_counter() - t0
    out["second_call_seconds"] = _timed(bound)
    base["numpy_seconds"].append(_timed(numpy_alone))
    base["blackbox_alone_seconds"].append(_timed(blackbox_alone))
    for name, times in base.items():
        out[name] = min(times)
    out["second_call_over_numpy"] = out["second_call_seconds"] / out["numpy_seconds"]
    out["second_call_over_blackbox_alone"] = (
        out["second_call_seconds"] / out["blackbox_alone_seconds"]
    )
    out["peak"] = peak_rss_mb()
    out["lower"] = result.lower.tolist()
    out["estimate"] = result.estimate.tolist()
    out["exact"] = [lam / (2 * SCALE**2) for lam in ORDERS]
    out["outside"] = result.outside.tolist()
    out["grid_shape"] = list(result.grid_shape)
    return out


def progress_child(n: int) -> dict:
    mechanism, x, x_prime = _stream_setup()
    import jax

    from rdpjax.stream import MechanismPair, streamed_bound

    calls = []

    def run(progress):
        return streamed_bound(
            jax.random.key(3),
            MechanismPair(mechanism, x, x_prime),
            list(ORDERS),
            n=n,
            both_directions=True,
            progress=progress,
        )

    def sink(done, total):
        calls.append(done)

    fns = {"without": lambda: run(None), "with": lambda: run(sink)}
    results = {name: fn() for name, fn in fns.items()}  # compiles both variants
    times = {name: [] for name in fns}
    for r in range(PROGRESS_REPEATS):  # pairs in ABBA order: a drift of load hits both alike
        for name in ("without", "with") if r % 2 == 0 else ("with", "without"):
            times[name].append(_timed(fns[name]))
    out = {f"{name}_progress_seconds": min(t) for name, t in times.items()}
    out.update({f"{name}_progress_all_seconds": t for name, t in times.items()})
    ratios = sorted(a / b for a, b in zip(times["with"], times["without"], strict=True))
    out["overhead_of_best"] = out["with_progress_seconds"] / out["without_progress_seconds"] - 1
    out["overhead"] = ratios[len(ratios) // 2] - 1  # median ratio of the pairs
    out["calls_per_run"] = len(calls) // (PROGRESS_REPEATS + 1)
    out["same_lower"] = bool((results["with"].lower == results["without"].lower).all())
    out["devices"] = len(jax.devices())
    return out


def audit_child(n: int) -> dict:
    """``rdpjax.audit(Gaussian(5), …, n)`` itself: it must take the streamed route."""
    return stream_child(n, via_audit=True)


CHILDREN = {
    "stream": stream_child,
    "audit": audit_child,
    "blackbox": blackbox_child,
    "progress": progress_child,
}


# ----------------------------------------------------------------------------- driver


def run_case(case: str, n: int) -> dict:
    cmd = [sys.executable, __file__, "--child", case, "--n", str(n)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"{case} failed:\n{run.stderr[-4000:]}")
    return {"case": case, "n": n, **json.loads(run.stdout.strip().splitlines()[-1])}


def _report_stream(name: str, s: dict | None) -> None:
    if not s:
        return
    print(
        f"  {name:<8} n={s['n']:.0e}/side, both directions: second call "
        f"{s['second_call_seconds']:.1f} s = {s['second_call_over_rng']:.2f}× jax.random alone "
        f"({s['rng_seconds']:.1f} s); first call {s['first_call_seconds']:.1f} s | peak RSS "
        f"{s['peak']['ru_maxrss_mb']:.0f} MB (after import "
        f"{s['rss_after_import']['ru_maxrss_mb']:.0f} MB) | lower "
        f"{[round(v, 5) for v in s['lower']]} vs exact {s['exact']}",
        flush=True,
    )


def report(res: dict) -> None:
    for name in ("stream", "audit"):
        _report_stream(name, res.get(name))
    b = res.get("blackbox")
    if b:
        print(
            f"  blackbox n={b['n']:.0e}/side, both directions: second call "
            f"{b['second_call_seconds']:.2f} s = {b['second_call_over_numpy']:.2f}× numpy normals "
            f"alone ({b['numpy_seconds']:.2f} s), {b['second_call_over_blackbox_alone']:.2f}× the "
            f"black box alone ({b['blackbox_alone_seconds']:.2f} s); first call "
            f"{b['first_call_seconds']:.2f} s | peak RSS {b['peak']['ru_maxrss_mb']:.0f} MB (after "
            f"import {b['rss_after_import']['ru_maxrss_mb']:.0f} MB) | lower "
            f"{[round(v, 5) for v in b['lower']]} vs exact {b['exact']}",
            flush=True,
        )
    p = res.get("progress")
    if p:
        print(
            f"  progress n={p['n']:.0e}/side: {p['with_progress_seconds']:.2f} s with, "
            f"{p['without_progress_seconds']:.2f} s without (best of 8 each; median ratio of "
            f"8 pairs {100 * p['overhead']:+.1f}%), "
            f"{p['calls_per_run']} calls a run, same bound: {p['same_lower']}",
            flush=True,
        )


def _below(lower, exact) -> bool:
    return all(lo <= e for lo, e in zip(lower, exact, strict=True))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 1e7 / 1e6 / 1e6")
    parser.add_argument("--cases", nargs="+", default=list(CHILDREN), choices=list(CHILDREN))
    parser.add_argument("--out", type=Path, default=None, help="JSON path")
    parser.add_argument("--child", choices=list(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(CHILDREN[args.child](args.n)))
        return
    command = "python benchmarks/performance/audit_memory.py" + (" --quick" if args.quick else "")
    if args.cases != list(CHILDREN):
        command += " --cases " + " ".join(args.cases)
    if args.out:
        command += f" --out {args.out}"
    name = "audit_memory_quick.json" if args.quick else "audit_memory.json"
    out_path = args.out or RESULTS / name
    res = {
        "command": command,
        "cpu_count": os.cpu_count(),
        "machine": platform.platform(),
        "load_average_at_start": list(os.getloadavg()),
    }
    print(f"audit memory and time, each case in a fresh process ({command}):")
    for case in args.cases:
        res[case] = run_case(case, SIZES[case][1 if args.quick else 0])
        report({case: res[case]})
    b, p = res.get("blackbox"), res.get("progress")
    targets = {}
    for name in ("stream", "audit"):
        s = res.get(name)
        if s:
            targets[f"{name}_{s['n']:.0e}_peak_rss_below_1GB"] = s["peak"]["ru_maxrss_mb"] < 1024
            targets[f"{name}_{s['n']:.0e}_at_most_2x_rng"] = s["second_call_over_rng"] <= 2
            targets[f"{name}_below_exact"] = _below(s["lower"], s["exact"])
            targets[f"{name}_at_least_0.95_exact"] = all(
                lo >= 0.95 * e for lo, e in zip(s["lower"], s["exact"], strict=True)
            )
    if b:
        targets[f"blackbox_{b['n']:.0e}_peak_rss_below_1GB"] = b["peak"]["ru_maxrss_mb"] < 1024
        targets["blackbox_below_exact"] = _below(b["lower"], b["exact"])
    if p:
        targets["progress_overhead_at_most_3_percent"] = p["overhead"] <= 0.03
    res["targets"] = targets
    res["load_average_at_end"] = list(os.getloadavg())
    for target, met in targets.items():
        print(f"  {target}: {'met' if met else 'NOT met'}")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out_path}\nreproduce: {command}")


if __name__ == "__main__":
    main()
