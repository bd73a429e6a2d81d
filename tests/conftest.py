"""Fixtures for the core tests (references live in ``references.py``)."""

import os

# Implicit rank promotion (broadcasting arrays of different ranks, e.g. (n, d) with (d,)) raises
# in the suite: such broadcasts are written out in rdpjax. Programs the tests start inherit it.
os.environ["JAX_NUMPY_RANK_PROMOTION"] = "raise"
# Strict dtype promotion likewise: mixed-dtype arithmetic is written out with explicit casts in
# rdpjax, so a silent int -> float or float32 -> float64 promotion cannot change a result unnoticed.
os.environ["JAX_NUMPY_DTYPE_PROMOTION"] = "strict"

# One persistent jax compilation cache for the whole run, fresh and removed at its end: the
# process that starts the run makes the folder, and the test workers, the commands, scripts and
# notebook kernels the tests start all inherit it, so a program compiled in one is read back by
# the others (the suite on 2 cores: 17.7 -> 16.4 min; benchmarks/LOG.md, "Suite time"). jax's
# default floor stands (programs that took at least 1 s to compile are kept): writing every
# small program costs more than reading it back saves. A size bound makes jax lock the folder
# (filelock) around each read and write, so no process reads an entry half written. Results are
# unchanged (jax keys an entry on the lowered program itself), and the tests that count
# compilations still see a program read back from the cache (tests/test_programs.py).
SUITE_CACHE_BYTES = 2**31
if not os.environ.get("RDPJAX_SUITE_JAX_CACHE"):
    import tempfile

    os.environ["RDPJAX_SUITE_JAX_CACHE"] = tempfile.mkdtemp(prefix="rdpjax-suite-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = os.environ["RDPJAX_SUITE_JAX_CACHE"]
    os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"] = str(SUITE_CACHE_BYTES)
    _MADE_CACHE = os.environ["RDPJAX_SUITE_JAX_CACHE"]
else:
    _MADE_CACHE = None

import jax  # noqa: E402
import pytest  # noqa: E402

import rdpjax  # noqa: E402

jax.config.update("jax_numpy_rank_promotion", "raise")  # in case jax was imported first
jax.config.update("jax_numpy_dtype_promotion", "strict")
jax.config.update("jax_compilation_cache_dir", os.environ["RDPJAX_SUITE_JAX_CACHE"])
jax.config.update("jax_compilation_cache_max_size", SUITE_CACHE_BYTES)  # locked, as above


def pytest_unconfigure(config):
    """The process that made the run's compilation cache removes it."""
    del config
    if _MADE_CACHE is not None:
        import shutil

        shutil.rmtree(_MADE_CACHE, ignore_errors=True)


# Commands the tests start as programs (python -m rdpjax.cli) would otherwise fill the user's
# compilation cache (~/.cache/rdpjax); tests/cli/test_cli_cache.py turns it on where it tests it.
os.environ.setdefault("RDPJAX_NO_CACHE", "1")


@pytest.fixture
def x64():
    """Run a test body inside rdpjax's scoped float64 mode."""
    with rdpjax.float64():
        yield


def _as_from_a_terminal() -> None:  # runs in the child between fork and exec
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _signal_masks(pid: int) -> str:
    """The SigBlk/SigIgn/SigCgt lines of /proc/PID/status (empty where there is no /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            keep = ("SigBlk", "SigIgn", "SigCgt")
            return " ".join(line.strip() for line in f if line.startswith(keep))
    except OSError:
        return ""


@pytest.fixture
def ctrl_c():
    """Run ``python -m rdpjax.cli ARGV`` in ``cwd`` and press Ctrl-C once it starts drawing.

    ``ctrl_c(argv, cwd)`` waits (60 s at most) for the mechanism to create ``cwd/started``,
    notes the program's child processes, sends SIGINT and waits 30 s for it to end; it returns
    ``(status, stdout, stderr, children)``. The program gets SIGINT's default disposition,
    unblocked, as from a shell: a test worker may have SIGINT ignored or blocked, which its
    children inherit (and Python then never raises KeyboardInterrupt). A program still running
    30 s after SIGINT fails the test with its signal masks.
    """
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), RDPJAX_NO_CACHE="1")

    def run(argv, cwd):
        proc = subprocess.Popen(
            [sys.executable, "-m", "rdpjax.cli", *argv], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
            preexec_fn=_as_from_a_terminal,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not (Path(cwd) / "started").exists():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the audit did not start drawing"
                time.sleep(0.05)
            children = subprocess.run(
                ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
            ).stdout.split()
            masks = _signal_masks(proc.pid)
            proc.send_signal(signal.SIGINT)
            try:
                out, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"no exit 30 s after SIGINT; the program's signals: {masks}")
        finally:
            if proc.poll() is None:
                proc.kill()
        return proc.returncode, out, err, children

    return run
