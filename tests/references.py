"""Shared references and helpers for the core tests.

Statistical assertions state their nominal false-failure rate; all randomness uses fixed keys,
so a given version of the code either passes or fails deterministically.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys

import numpy as np

B = 5.0  # noise scale of paper 000's additive mechanisms
ORDERS = (2.0, 5.0, 7.0)


def gaussian_exact(lam, b=B, shift=1.0):
    """Closed form D_λ(N(shift, b²) ‖ N(0, b²)) = λ shift² / (2 b²)."""
    return lam * shift**2 / (2 * b * b)


def laplace_exact(lam, b=B):
    """Closed form of paper 000 §V (sensitivity 1), typed here from the paper, not the code."""
    return math.log(
        lam / (2 * lam - 1) * math.exp((lam - 1) / b)
        + (lam - 1) / (2 * lam - 1) * math.exp(-lam / b)
    ) / (lam - 1)


def assert_within_se(estimate, truth, se, z=4.0):
    """|estimate − truth| < z · se; z = 4 gives a two-sided false-failure rate of 6e-5."""
    estimate, truth, se = (np.asarray(a, np.float64) for a in (estimate, truth, se))
    assert np.all(np.abs(estimate - truth) < z * se), (estimate, truth, se)


def run_script(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh CPU-only Python (so that it can set ``XLA_FLAGS`` before jax is
    imported, e.g. to force host devices) and return the JSON it prints after ``RESULT``.

    No time limit: it is one process, waited for as an in-process test would be; a wall-clock
    limit would fail the test on a machine that is merely loaded."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    run = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(next(s for s in run.stdout.splitlines() if s.startswith("RESULT"))[6:])


class Memory:
    """A checkpoint kept in memory: a copy of every state saved (``state``), and their number.

    It fits both the looks driver's checkpoint (``save(run, now)``) and the betting test's
    (``save(state, now)``): it keeps whatever it is given.
    """

    def __init__(self, state=None):
        self.state, self.saves = state, 0

    def load(self):
        return self.state

    def save(self, state, now):
        self.state, self.saves = copy.deepcopy(state), self.saves + 1


def interrupted_at(sample, call: int, name: str | None = None):
    """``sample`` that raises ``KeyboardInterrupt`` at its ``call``-th call (a crash mid-run).

    The wrapper keeps ``sample``'s ``__name__`` (or takes ``name``), so an audit's checkpoint
    fingerprint, which records the sampler's name, is that of the uninterrupted run.
    """
    calls = [0]

    def interrupted(*args, **kwargs):
        calls[0] += 1
        if calls[0] == call:
            raise KeyboardInterrupt
        return sample(*args, **kwargs)

    interrupted.__name__ = name or getattr(sample, "__name__", "sample")
    return interrupted
