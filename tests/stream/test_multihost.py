"""Several processes, one computation: rdpjax.estimator.sharding across ``jax.distributed``
processes.

Two local processes with two forced CPU devices each join one ``jax.distributed`` run on
127.0.0.1 (gloo CPU collectives) and compute, over the four devices of ``jax.devices()``, a
streamed bound (7 chunks: one padding chunk, and a rest), two replication studies
(``replicated_bounds`` with 6 replications, 2 of them padding, and ``rdpjax.studies.coverage``
with 8) and an in-memory ``linear_binning`` over the mesh. A third process with four forced
devices and no ``jax.distributed`` computes the same on the same split (same chunk and
replication blocks per device); every result of both processes must match it.
"""

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # three jax processes, two of them joined by jax.distributed

ROOT = Path(__file__).resolve().parents[2]
LOCAL_DEVICES, PROCESSES = 2, 2
# A hang guard, not a time limit: a process that dies leaves its peers blocked in a collective
# forever, and _run_all kills them as soon as one fails; this only ends a true deadlock, with room
# for a machine loaded many times over (the test took 51-59 s on a shared 2-core machine).
TIMEOUT_S = 1800

_WORKER = textwrap.dedent(
    """
    import os, sys, warnings
    process, processes, port, local, out = sys.argv[1:]
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={local}"
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    if int(processes) > 1:  # before any other JAX call
        jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}",
                                   num_processes=int(processes), process_id=int(process),
                                   initialization_timeout=1800)
    import jax.numpy as jnp
    import numpy as np
    import rdpjax
    from rdpjax import mechanisms
    from rdpjax.estimator.binning import linear_binning
    from rdpjax.estimator.grid import grid_from_range
    from rdpjax.estimator.sharding import draw_mesh
    from rdpjax.stream import JaxSamplers, replicated_bounds, streamed_bound
    from rdpjax.studies import coverage
    warnings.simplefilter("ignore")
    res = dict(processes=jax.process_count(), devices=len(jax.devices()),
               local=len(jax.local_devices()))
    chunk = 2**12
    b = streamed_bound(jax.random.key(7),
                       JaxSamplers(lambda k, m: 1.0 + 5.0 * jax.random.normal(k, (m,), jnp.float32),
                                   lambda k, m: 5.0 * jax.random.normal(k, (m,), jnp.float32)),
                       [2.0, 5.0], n=7 * chunk + 1000, chunk=chunk, grid=(-14.0, 16.0),
                       bandwidth=1.0, floor=2e-3, second_order=False,
                       devices=jax.devices())
    res.update({f"stream_{f}": getattr(b, f)
                for f in ("estimate", "lower", "std_error", "bias", "outside", "n_p")})
    gauss = mechanisms.Gaussian(scale=5.0)
    pair = tuple(map(np.asarray, gauss.reference_pair()))
    r = replicated_bounds(jax.random.key(8), gauss, [pair, pair[::-1]], [2.0, 5.0], n=500,
                          reps=6, second_order=False)
    res.update(reps_estimate=r.estimate, reps_lower=r.lower)
    c = coverage(jax.random.key(9), gauss, *pair, [2.0, 5.0], n=500, reps=8,
                 second_order=False)
    res.update(cov_estimate=c.estimate, cov_lower=c.lower, cov_coverage=c.coverage)
    with rdpjax.float64():
        grid = grid_from_range(np.array([-3.0]), np.array([3.0]), shape=(64,), pad=(0,))
        x = np.random.default_rng(0).normal(size=1001)  # 4 blocks of 250, then 1 more
        counts, outside = jax.jit(lambda x: linear_binning(x, grid, mesh=draw_mesh()))(x)
        res.update(bin_counts=np.asarray(counts), bin_outside=np.asarray(outside))
    np.savez(out, **{k: np.asarray(v) for k, v in res.items()})
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gloo_built() -> bool:
    from jax._src.lib import _jax  # no public way to ask which CPU collectives jaxlib has

    return hasattr(_jax, "make_gloo_tcp_collectives")


def _run_all(commands: dict[str, list[str]], tmp_path: Path) -> None:
    """Starts every command at once and waits for all; kills the rest as soon as one exits
    with an error (its peers would wait for it in a collective), or all of them after the hang
    guard TIMEOUT_S, and fails on a non-zero exit."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    procs, logs = {}, {}
    for name, args in commands.items():
        logs[name] = tmp_path / f"{name}.log"
        with open(logs[name], "w") as log:
            procs[name] = subprocess.Popen(
                [sys.executable, "-c", _WORKER, *args], stdout=log, stderr=log, env=env
            )
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            codes = [proc.poll() for proc in procs.values()]
            if None not in codes or any(code not in (None, 0) for code in codes):
                break
            time.sleep(0.5)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    failed = {k: p.returncode for k, p in procs.items() if p.returncode != 0}
    if failed:
        tails = "\n".join(f"--- {k}:\n{logs[k].read_text()[-2000:]}" for k in failed)
        pytest.fail(f"exit codes {failed} (negative: killed)\n{tails}")


def _load(path: Path) -> tuple[tuple[int, int, int], dict]:
    """A worker's (process count, device count, local device count) and its results."""
    res = dict(np.load(path))
    return tuple(int(res.pop(k)) for k in ("processes", "devices", "local")), res


@pytest.mark.skipif(not _gloo_built(), reason="this jaxlib has no gloo CPU collectives")
def test_two_processes_equal_one_process_on_as_many_devices(tmp_path):
    total = PROCESSES * LOCAL_DEVICES
    port = str(_free_port())
    commands = {
        f"process{i}": [str(i), str(PROCESSES), port, str(LOCAL_DEVICES), str(tmp_path / f"{i}")]
        for i in range(PROCESSES)
    }
    commands["single"] = ["0", "1", "0", str(total), str(tmp_path / "single")]
    _run_all(commands, tmp_path)
    layout, single = _load(tmp_path / "single.npz")
    assert layout == (1, total, total)
    assert single["stream_n_p"] == 7 * 2**12 + 1000
    assert single["reps_lower"].shape == (2, 6, 2) and single["cov_lower"].shape == (8, 2)
    for i in range(PROCESSES):
        layout, got = _load(tmp_path / f"{i}.npz")
        assert layout == (PROCESSES, total, LOCAL_DEVICES)
        assert got.keys() == single.keys()
        for name, want in single.items():
            # The counts are float64 sums of per-device histograms; across processes gloo's
            # all-reduce may add them in another order than XLA's in-process one, which moves
            # them by rounding only (~1e-16 relative; the results were bit-identical when this
            # test was written, jaxlib 0.10.2). rtol=1e-9 leaves room for that, while a chunk
            # missed or counted twice (4096 of 29672 draws a side) moves counts by whole draws.
            np.testing.assert_allclose(got[name], want, rtol=1e-9, atol=0, err_msg=name)
