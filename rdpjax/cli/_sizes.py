"""How many outputs ``rdpjax audit`` draws.

The limit on ``--n`` and ``--max-n``, and the warning before a large fixed-n audit (with the time
its draws take).
"""

from __future__ import annotations

from rdpjax.cli._types import CliError

__all__ = ["LARGE_N", "MAX_N", "SLOW_SECONDS", "check_size", "size_warning", "time_notice"]


MAX_N = 2**40
"""The most outputs per database ``--n`` and ``--max-n`` take (≈ 1.1·10¹²): 2.2·10¹² draws in
all, 2.5 days at 10⁷ draws per second (a fast JAX sampler on a CPU), 8 months at 10⁵ (a numpy
black box)."""

LARGE_N = 10**10
"""Above this many outputs per database a fixed-n audit warns before drawing: 2·10¹⁰ draws take
at least half an hour even at 10⁷ draws per second, and days for a slow black box."""

_RATES = (10**5, 10**7)
"""Draws per second, slow to fast, behind the warning's time range (numpy black boxes: about
3·10⁵ measured in issue 47; JAX samplers on a CPU: ~10⁷)."""


def _duration(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps the number ≥ 1: "33 minutes", "2.3 days"."""
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            value = seconds / size
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.2g} {unit}"
    return f"{seconds:.2g} seconds"


def size_warning(n: int) -> str | None:
    """The warning for a fixed-n audit of ``n`` outputs per database, or ``None`` (n small).

    It gives the scale (``2n`` draws, and the time they take at :data:`_RATES`), how to stop the
    run and what to use instead.
    """
    if n <= LARGE_N:
        return None
    slow, fast = (_duration(2 * n / rate) for rate in _RATES)
    return (
        f"--n {n:.3g} draws {2 * n:.3g} outputs in all: about {fast} at 10^7 draws per second, "
        f"{slow} at 10^5; Ctrl-C stops it (its draws are not kept), and --until-refuted "
        f"--max-n {n:.3g} --report DIR stops at the first refutation and can be resumed"
    )


SLOW_SECONDS = 60.0
"""A fixed-n audit whose draws should take longer than this says so before it draws them."""

_TIMING_OUTPUTS = 1_000
"""Outputs drawn once, before the audit, to time a numpy black box (not part of the audit)."""


def _short(n: int) -> str:
    """``n`` as typed on a command line: 1e5, 2.5e6, 1234."""
    text = f"{n:.3g}".replace("e+0", "e").replace("e+", "e")
    return text if float(text) == n else str(n)


def time_notice(sample, database, n: int, n_given: bool) -> str | None:
    """The note before a fixed-n audit of a slow numpy black box, or ``None`` (it is fast).

    ``sample(rng, database, m)`` is timed once on :data:`_TIMING_OUTPUTS` outputs from a
    generator of its own (these outputs are thrown away: the audit draws its own). When the
    audit's ``2n`` draws would take more than :data:`SLOW_SECONDS`, the note gives the time, how
    to stop at the first refutation instead, and, where ``--n`` was not given, that n is the
    default and what a tenth of it would take.
    """
    import time

    import numpy as np

    started = time.perf_counter()
    sample(np.random.default_rng(0x7173), database, _TIMING_OUTPUTS)
    rate = _TIMING_OUTPUTS / max(time.perf_counter() - started, 1e-9)
    seconds = 2 * n / rate
    if seconds <= SLOW_SECONDS:
        return None
    note = (
        f"your sampler draws about {rate:,.0f} outputs/s, so 2 × {n:,} outputs take about "
        f"{_duration(seconds)}"
    )
    if not n_given:
        note += (
            f" (n = {n:,} per database is the default; --n {_short(n // 10)} would take about "
            f"{_duration(seconds / 10)})"
        )
    return note + (
        f"; --until-refuted --max-n {_short(n)} stops at the first look that refutes the claim "
        "(with --report DIR, an interrupted audit can be resumed)"
    )


def check_size(flag: str, n: int | None) -> None:
    """Raise a :class:`CliError` if ``n`` (of ``flag``) exceeds :data:`MAX_N`."""
    if n is not None and n > MAX_N:
        raise CliError(
            f"{flag} {n:.3g}: at most 2^40 ≈ {MAX_N:.2g} outputs per database (2.2e+12 draws "
            f"would take days to months); use a smaller {flag}"
            + (", or --until-refuted --max-n N to stop at the first refutation" * (flag == "--n"))
        )
