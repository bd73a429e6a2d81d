"""The program budget: the compiled programs of jitted functions, dropped past a count.

jax keeps every program it compiles for the life of the process, and each holds memory maps; a
process that bounds data set after data set, or audit after audit, on new shapes runs out of them.
:func:`keep_program_budget` (before each :func:`rdpjax.lower_bound`) and :func:`trim_programs`
(before each streamed bound, :mod:`rdpjax.stream.driver`) drop a set of jitted functions' programs
once one of them holds too many. Results are unchanged: the next call compiles again. Moved here
from ``rdpjax/estimator/api.py`` (issue 52: tricks in one internal package); the budget stays
importable as ``rdpjax.estimator.PROGRAM_BUDGET``, but the value read is this module's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Sequence
from typing import Any, cast

import jax
import numpy as np

__all__ = [
    "PROGRAM_BUDGET",
    "compiled_names",
    "keep_program_budget",
    "program_key",
    "trim_programs",
]

PROGRAM_BUDGET = 64
"""Compiled programs of one kind that :func:`rdpjax.lower_bound` keeps.

The kinds: settings, binning, bound, and the quantile map on the device
(``rdpjax.estimator.api.BOUND_PROGRAMS``).

jax keeps every compiled program for the life of the process. Before sizes were bucketed, every
new sample size compiled a new binning and every new grid layout a new bound, and a process
bounding data set after data set ran out of memory maps. Now samples are padded to at least 2^15
rows (:data:`rdpjax.estimator.from_samples.MIN_PADDED_ROWS`), beyond that to one of four sizes per
octave, and layouts are bucketed, so the programs of a study saturate (measured:
``docs/performance.md``, section "The program budget (PROGRAM_BUDGET)"). The budget is the safety
net for what buckets do not bound (e.g. every pair of unequal sizes):
past it :func:`rdpjax.lower_bound` drops its own compiled programs and starts afresh (the next calls
compile again; results are unchanged; ``tests/estimator/test_bounds.py`` checks it, and
``benchmarks/performance/compiled_programs.py`` counts the programs kept). Read at each call: set
``rdpjax._internal.programs.PROGRAM_BUDGET`` to change it."""

_seen_programs: set[tuple[Any, ...]] = set()


@contextlib.contextmanager
def compiled_names() -> Generator[list[str], None, None]:
    """The names of the programs XLA compiles inside the block (``jax.monitoring`` events).

    What the tests and ``benchmarks/performance/compiled_programs.py`` read to see that a program
    was compiled, or was not compiled again. A name is listed once per backend compilation.
    """
    names: list[str] = []

    def on_event(event: str, duration_secs: float, **kwargs: str | int) -> None:
        del duration_secs
        if event == "/jax/core/compile/backend_compile_duration":
            names.append(str(kwargs.get("fun_name")))

    jax.monitoring.register_event_duration_secs_listener(on_event)
    try:
        yield names
    finally:
        jax.monitoring.unregister_event_duration_listener(on_event)


def program_key(*args: Any) -> tuple[Any, ...]:
    """What decides the compiled programs of one call on ``args``.

    That is the pytree structure of ``args`` (a plan's static fields among it), and every leaf's
    shape and dtype.
    """
    leaves, tree = cast(tuple[list[Any], Any], jax.tree.flatten(args))
    return tree, tuple((np.shape(x), str(getattr(x, "dtype", type(x).__name__))) for x in leaves)


def keep_program_budget(programs: Sequence[Callable[..., Any]], key: tuple[Any, ...]) -> None:
    """Before a call whose compiled-program combination is ``key``: past the budget, drop them all.

    The count is jax's own (each jitted function's ``_cache_size()``, so programs compiled for
    other callers, e.g. :mod:`rdpjax.stream` reusing ``bound_program``, count too); where a jax
    version lacks it (or one of ``programs`` is not a jitted function), the distinct keys seen since
    the last drop. The budget is :data:`PROGRAM_BUDGET`, read at each call.
    """
    if all(callable(getattr(fn, "_cache_size", None)) for fn in programs):
        sizes: list[int] = [fn._cache_size() for fn in programs]  # pyright: ignore[reportFunctionMemberAccess]
        full = max(sizes) >= PROGRAM_BUDGET
    else:
        full = key not in _seen_programs and len(_seen_programs) >= PROGRAM_BUDGET
    if full:
        for fn in programs:
            fn.clear_cache()  # pyright: ignore[reportFunctionMemberAccess]
        _seen_programs.clear()
    _seen_programs.add(key)


def trim_programs(programs: Sequence[Callable[..., Any]], budget: int = PROGRAM_BUDGET) -> None:
    """Drop the compiled programs of these jitted functions once one of them holds ``budget``.

    For loops whose shapes change every call (a stream's grid and Poisson sizes): compiled
    programs are never freed otherwise, and some thousand of them exhaust the process's memory
    maps (LLVM's "Cannot allocate memory", seen after about 1,100 streamed audits in one
    process). Functions without jax's ``_cache_size`` are left alone.
    """
    sizes = [fn._cache_size() for fn in programs if callable(getattr(fn, "_cache_size", None))]  # pyright: ignore[reportFunctionMemberAccess]
    if sizes and max(sizes) >= budget:
        for fn in programs:
            clear = getattr(fn, "clear_cache", None)
            if callable(clear):
                clear()
