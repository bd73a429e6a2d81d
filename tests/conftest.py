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


@pytest.fixture
def terminal_popen():
    """``subprocess.Popen`` for a program a test will interrupt with SIGINT, as Ctrl-C would.

    The child gets SIGINT's default disposition, unblocked: a program started from a shell has
    it, but a test worker may have SIGINT ignored or blocked, which its children inherit (and
    Python then never raises KeyboardInterrupt). ``terminal_popen.signals(pid)`` gives a
    child's signal masks from /proc, for the message of a test whose child did not stop.
    """
    import subprocess

    def popen(args, **kwargs):
        return subprocess.Popen(args, preexec_fn=_as_from_a_terminal, **kwargs)

    popen.signals = _signal_masks  # pyright: ignore[reportFunctionMemberAccess]
    return popen


def _signal_masks(pid: int) -> str:
    """The SigBlk/SigIgn/SigCgt lines of /proc/PID/status (empty where there is no /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            keep = ("SigBlk", "SigIgn", "SigCgt")
            return " ".join(line.strip() for line in f if line.startswith(keep))
    except OSError:
        return ""
