"""Argument types of the ``rdpjax`` subcommands, and the errors the command line reports.

A mistake in the input is a :class:`CliError`: :func:`rdpjax.cli.main` prints it as one line on
stderr and exits with status 2. Argument types (parsers of numbers, sample sizes, orders λ,
claimed RDP values, …) raise ``argparse.ArgumentTypeError``, which the parser reports the same way
(:class:`Parser`). Re-exported by :mod:`rdpjax.cli._args`.
"""

from __future__ import annotations

import argparse
import math

__all__ = [
    "CliError",
    "Parser",
    "alpha_level",
    "count",
    "cpu_devices",
    "dpsgd_triple",
    "finite_float",
    "order",
    "positive_float",
    "rdp_table",
    "reps",
    "seed",
    "whole",
]


class CliError(Exception):
    """An input problem, reported as one line with exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


# --------------------------------------------------------------------------------------------
# Argument types.


def _number(text: str, valid, requirement: str) -> float:
    """``float(text)`` if it is finite and ``valid``; else an argparse error naming the rule."""
    try:
        value = float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from err
    if not math.isfinite(value) or not valid(value):
        raise argparse.ArgumentTypeError(f"{requirement}: {text!r}")
    return value


def finite_float(text: str) -> float:
    """A finite number."""
    return _number(text, lambda v: True, "must be a finite number")


def positive_float(text: str) -> float:
    """A finite number > 0."""
    return _number(text, lambda v: v > 0, "must be a finite positive number")


def whole(text: str, least: int) -> int:
    """A whole number ≥ ``least`` (``1e6`` is accepted, ``2.5`` is not)."""
    rule = f"must be a whole number ≥ {least}"
    return int(_number(text, lambda v: v == int(v) and v >= least, rule))


def count(text: str) -> int:
    """A sample size: a whole number ≥ 2 (``1e6`` is accepted)."""
    return whole(text, 2)


def bound_size(text: str) -> int:
    """A sample size a Rényi bound is planned for: a whole number ≥ 20.

    20 is :data:`rdpjax.estimator.planner.MIN_SAMPLES`, not imported: the parser loads no jax.
    """
    return whole(text, 20)


def reps(text: str) -> int:
    """A number of replications: a whole number ≥ 1."""
    return whole(text, 1)


def seed(text: str) -> int:
    """A PRNG seed: a whole number in [0, 2^63) (``jax.random.key`` takes a 64-bit integer)."""
    try:
        value = int(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"a seed must be a whole number; got {text!r}") from err
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"a seed must be in [0, 2^63); got {text!r}")
    return value


def cpu_devices(text: str) -> int:
    """``auto`` (one per core this process may run on) or a whole number ≥ 1."""
    if text.strip().lower() != "auto":
        return whole(text, 1)
    from rdpjax._internal.sharding import cpu_cores  # imports jax, but starts no backend

    return cpu_cores()


def order(text: str) -> float:
    """An order λ: a finite number > 1."""
    return _number(text, lambda v: v > 1, "an order λ must be finite and > 1")


def alpha_level(text: str) -> float:
    """A family-wise error level in (0, 0.5)."""
    return _number(text, lambda v: 0 < v < 0.5, "must be in (0, 0.5)")


def rdp_table(text: str) -> dict[float, float]:
    """``2=0.1,5=0.4`` → ``{2.0: 0.1, 5.0: 0.4}``: claimed ε(λ) at orders λ > 1."""
    table: dict[float, float] = {}
    usage = "expects ORDER=EPSILON[,ORDER=EPSILON...], e.g. 2=0.1,5=0.4"
    for item in text.split(","):
        lam_text, sep, eps_text = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{usage}; got {text!r}")
        lam = order(lam_text)
        if lam in table:
            raise argparse.ArgumentTypeError(f"order {lam:g} given twice in {text!r}")
        table[lam] = _number(eps_text, lambda v: v >= 0, f"ε({lam:g}) must be a number ≥ 0")
    return table


def dpsgd_triple(text: str) -> tuple[float, float, int]:
    """``NOISE_MULTIPLIER,SAMPLING_RATE,STEPS`` → ``(σ, q, T)``: σ > 0, q in (0, 1], T ≥ 1 whole."""
    usage = "expects NOISE_MULTIPLIER,SAMPLING_RATE,STEPS, e.g. 1.1,0.01,1000"
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"{usage}; got {text!r}")
    sigma = _number(parts[0], lambda v: v > 0, "the noise multiplier must be a finite number > 0")
    rate = _number(parts[1], lambda v: 0 < v <= 1, "the sampling rate must be in (0, 1]")
    steps = _number(parts[2], lambda v: v == int(v) and v >= 1, "steps must be a whole number ≥ 1")
    return sigma, rate, int(steps)
