"""Fixtures for the core tests (references live in ``references.py``)."""

import os

# Implicit rank promotion (broadcasting arrays of different ranks, e.g. (n, d) with (d,)) raises
# in the suite: such broadcasts are written out in rdpjax. Programs the tests start inherit it.
os.environ["JAX_NUMPY_RANK_PROMOTION"] = "raise"
# Strict dtype promotion likewise: mixed-dtype arithmetic is written out with explicit casts in
# rdpjax, so a silent int -> float or float32 -> float64 promotion cannot change a result unnoticed.
os.environ["JAX_NUMPY_DTYPE_PROMOTION"] = "strict"

import jax  # noqa: E402
import pytest  # noqa: E402

import rdpjax  # noqa: E402

jax.config.update("jax_numpy_rank_promotion", "raise")  # in case jax was imported first
jax.config.update("jax_numpy_dtype_promotion", "strict")

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
