"""What XLA compiles: fusion boundaries in the program text, program counts and program names.

The tests check what rdpjax returns; these checks read how it is compiled: the optimized HLO text
(the CPU fusion boundary's conditional, ``rdpjax._internal.fusion``), jax's private count of a
jitted function's programs (the budget, ``rdpjax._internal.programs``) and the names of rdpjax's
private jitted functions (``jit(_replicate)`` compiled once). These change with jax releases and
refactorings while no number does, so they moved here from ``tests/`` (issue 52), each check
naming its test; the tests keep the behaviour. Prints check, expected, seen, ok; writes the JSON;
exits 1 if a check fails (the fusion checks are skipped, ok ``None``, off the CPU). About 2 min of
CPU on 2 cores; ``--quick`` runs the program budget on 8 data sets instead of 16.

    python benchmarks/performance/compiled_programs.py [--quick] [--only CHECK ...]
        [--out benchmarks/results/performance/compiled_programs.json]
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from unittest import mock

import jax
import jax.numpy as jnp
import numpy as np

sys.path[:0] = [str(p) for p in Path(__file__).resolve().parents[:2]]  # here; benchmarks/
from _summary import write_json  # noqa: E402
from bound_compile import _entry_counts  # noqa: E402

import rdpjax  # noqa: E402
from rdpjax._internal import programs  # noqa: E402
from rdpjax._internal.fusion import materialized  # noqa: E402
from rdpjax._internal.programs import compiled_names  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "results" / "performance" / "compiled_programs.json"
ORDERS = (2.0, 5.0, 7.0)


class Check(NamedTuple):
    """One check's outcome: what was expected, what was seen, and whether they agree."""

    expected: str
    seen: str
    ok: bool | None  # None: does not apply here (e.g. a CPU-only boundary on a GPU)


def _hlo(f: Callable, *args) -> str:
    return jax.jit(f).lower(*args).compile().as_text()  # the optimized program


def _on_cpu(expected: str, seen: str, ok: bool) -> Check:
    if jax.default_backend() != "cpu":
        return Check(expected, f"{seen} (backend {jax.default_backend()})", None)
    return Check(expected, seen, ok)


def fusion_conditional_kept(quick: bool) -> Check:
    """The boundary (a loop counter as predicate) survives compilation as a conditional.

    From ``tests/stream/test_fusion.py::test_a_conditional_survives_compilation_on_the_cpu``.
    """
    f = lambda k, i: jnp.sum(materialized(jax.random.normal(k, (1000,)), i))  # noqa: E731
    seen = _hlo(f, jax.random.key(0), jnp.int32(0)).count("conditional(")
    return _on_cpu("≥ 1 conditional", f"{seen} conditional(s)", seen >= 1)


def fusion_conditional_under_vmap(quick: bool) -> Check:
    """Under ``vmap`` and ``lax.map`` the batch stays behind a conditional, not a fused select.

    From ``tests/stream/test_fusion.py::test_under_vmap_the_batch_stays_behind_one_conditional_
    on_the_cpu`` (fails without the boundary's batching rule)."""

    def draw_and_sum(k):
        return jnp.sum(materialized(jax.random.normal(k, (1000,))) ** 2)

    keys = jax.random.split(jax.random.key(0), 4)
    ways = {
        "vmap": (jax.vmap(draw_and_sum), keys),
        "lax.map": (lambda ks: jax.lax.map(draw_and_sum, ks, batch_size=2), keys),
        "one": (draw_and_sum, keys[0]),
    }
    seen = {name: _hlo(f, a).count("conditional(") for name, (f, a) in ways.items()}
    text = ", ".join(f"{name} {n}" for name, n in seen.items())
    return _on_cpu("≥ 1 conditional each", text, min(seen.values()) >= 1)


def fusion_boundaries_in_bound_of_draws(quick: bool) -> Check:
    """``bound_of_draws`` puts drawn samples behind boundaries: more conditionals than without.

    From ``tests/estimator/test_bounds.py::
    test_samples_drawn_in_the_program_give_the_same_bound_behind_the_fusion_boundary``."""
    from rdpjax.stream import bound_of_draws, replicate

    def gauss(k):
        kp, kq = jax.random.split(k)
        return 1.0 + 5.0 * jax.random.normal(kp, (3000,)), 5.0 * jax.random.normal(kq, (3000,))

    keys = jax.random.split(jax.random.key(5), 4)
    with rdpjax.float64():
        plan, _, _ = rdpjax.plan_bound(*gauss(keys[0]), ORDERS)
        counts = {}
        for rows in (replicate.MATERIALIZE_ROWS, 0):
            draw_and_bound = lambda k: bound_of_draws(plan, *gauss(k), materialize_rows=rows).lower  # noqa: E731, B023
            counts[rows] = _hlo(jax.vmap(draw_and_bound), keys).count("conditional(")
    behind, fused = counts[replicate.MATERIALIZE_ROWS], counts[0]
    return _on_cpu("behind > fused", f"behind {behind}, fused {fused}", behind > fused)


def bound_compile_entry_counts(quick: bool) -> Check:
    """``bound_compile.py``'s counter reads an rfft/irfft program's entry: 2 FFTs, ≥ 1 fusion.

    From ``tests/test_calibration_scripts.py::
    test_bound_compile_counts_the_programs_ffts_and_fusions``.
    """
    x = jnp.linspace(0.0, 1.0, 64)
    counts = _entry_counts(_hlo(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * 2.0, n=64) + 1.0, x))
    seen = f"{counts['ffts']} ffts, {counts['fusions']} fusions"
    return Check("2 ffts, ≥ 1 fusion", seen, counts["ffts"] == 2 and counts["fusions"] >= 1)


def replicated_bounds_programs(quick: bool) -> Check:
    """A replication study compiles ``jit(_replicate)`` once; new keys and databases, nothing.

    From ``tests/stream/test_stream.py::test_replicated_bounds_compile_once_and_match_lower_bound``.
    """
    from rdpjax.stream import replicated_bounds

    rr = rdpjax.mechanisms.RandomizedResponse(eps0=1.0)
    pairs = [(np.array([1, 0, 0]), np.array([0, 0, 0])), (np.array([1, 1, 0]), np.array([1, 1, 1]))]
    other = [(np.array([0, 1, 0]), np.array([0, 1, 1])), (np.array([0, 0, 1]), np.array([1, 0, 1]))]
    run = functools.partial(replicated_bounds, lam=list(ORDERS), n=2000, reps=3, second_order=False)
    with compiled_names() as names:
        run(jax.random.key(4), rr, pairs)
        first = list(names)
        run(jax.random.key(5), rr, other)
        again = names[len(first) :]
    seen = f"first: {first.count('jit(_replicate)')}× jit(_replicate); again: {again}"
    return Check(
        "1× jit(_replicate); again: []", seen, first.count("jit(_replicate)") == 1 and not again
    )


def streamed_bound_programs(quick: bool) -> Check:
    """A bucketed stream compiles ``jit(_stream_side)`` and ``jit(bound_program)`` once.

    A second call with new keys (a new pilot) compiles neither again. From ``tests/stream/
    test_stream.py::test_bucketed_layout_reuses_the_compiled_stream_across_calls`` (now
    ``test_bucketed_layout_puts_two_pilots_on_one_grid``)."""
    from rdpjax.stream import JaxSamplers, streamed_bound

    def p(k, m):
        return 1.0 + 5.0 * jax.random.normal(k, (m,), jnp.float32)

    def q(k, m):
        return 5.0 * jax.random.normal(k, (m,), jnp.float32)

    run = functools.partial(streamed_bound, lam=[2.0, 5.0], n=30000, layout="bucketed")
    with compiled_names() as names:
        run(jax.random.key(10), JaxSamplers(p, q))
        first = list(names)
        run(jax.random.key(11), JaxSamplers(p, q))
        again = names[len(first) :]
    main = {"jit(_stream_side)", "jit(bound_program)"}
    ok = main <= set(first) and not ({"jit(_stream_side)", "jit(_bound)"} & set(again))
    seen = f"first: {sorted(main & set(first))}; again: {sorted(set(again))}"
    return Check("first: both; again: neither", seen, ok)


def coverage_programs(quick: bool) -> Check:
    """A coverage study compiles ``jit(_draws)`` and ``jit(_bounds)``; another key reuses them.

    (Randomized response: another ε too; the Gaussian: bucketed, keys 1 and 2 on one grid.) From
    ``tests/studies/test_studies.py::test_coverage_compiles_its_study_once_per_shape`` (now
    ``test_coverage_with_another_key_gives_other_bounds_of_the_same_shape``)."""
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    mechs = rdpjax.mechanisms
    cases = [
        (mechs.RandomizedResponse(1.5), mechs.RandomizedResponse(1.0), {}),
        (mechs.Gaussian(5.0), mechs.Gaussian(5.0), {"layout": "bucketed"}),
    ]
    main, seen, ok = _STUDY, [], True
    for mech, other, options in cases:
        study = functools.partial(
            rdpjax.studies.coverage, x=x, x_prime=xp, lam=[2], n=500, reps=4, **options
        )
        with compiled_names() as first:
            study(jax.random.key(1), mech)
        with compiled_names() as again:
            study(jax.random.key(2), other)
        ok &= main <= set(first) and not main & set(again)
        seen.append(f"{type(mech).__name__}: {len(main & set(first))}, {len(main & set(again))}")
    return Check("both compiled first, neither again", "; ".join(seen), ok)


def coverage_shares_the_bound_program(quick: bool) -> Check:
    """A subsampled Gaussian whose pilot plans the Gaussian's layout reuses ``jit(_bounds)``.

    Its draws compile anew (``jit(_draws)``). From ``tests/studies/test_studies.py::
    test_mechanisms_with_one_layout_share_the_bound_program`` (now
    ``test_a_subsampled_gaussians_pilot_plans_the_gaussians_layout``)."""
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    g = rdpjax.mechanisms.Gaussian(5.0)
    study = functools.partial(
        rdpjax.studies.coverage, x=x, x_prime=xp, lam=[2], n=700, reps=3, key=jax.random.key(1)
    )
    with compiled_names() as first:
        study(mechanism=g, layout="bucketed")
    with compiled_names() as second:
        study(mechanism=rdpjax.mechanisms.PoissonSubsampled(g, 0.5), layout="bucketed")
    ok = {"jit(_draws)", "jit(_bounds)"} <= set(first)
    ok &= "jit(_draws)" in second and "jit(_bounds)" not in second
    seen = f"gaussian: {sorted(set(first) & _STUDY)}; subsampled: {sorted(set(second) & _STUDY)}"
    return Check("gaussian: both; subsampled: jit(_draws) only", seen, ok)


def coverage_chunks_compile_their_draws(quick: bool) -> Check:
    """A study in chunks of replications compiles its draws for the new chunk size.

    The chunks really ran. From ``tests/studies/test_studies.py::
    test_chunked_study_equals_one_call``, which keeps the equality with one call.
    """
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    study = functools.partial(
        rdpjax.studies.coverage, jax.random.key(4), rdpjax.mechanisms.Laplace(2.0), x, xp, [2, 5],
        n=600, reps=9, batch_size=1,
    )  # fmt: skip
    study()
    with compiled_names() as names:
        study(chunk_samples=3 * 600)
    return Check("jit(_draws) compiled", f"{sorted(set(names) & _STUDY)}", "jit(_draws)" in names)


def coverage_smaller_bound_batches(quick: bool) -> Check:
    """With one grid point a batch, only the bounds compile anew: ``jit(_bounds)``, not draws.

    From ``tests/studies/test_studies.py::test_large_grids_are_bounded_in_smaller_batches``,
    which keeps the agreement with the default batches.
    """
    x, xp = rdpjax.mechanisms.databases.paper_pair()
    study = functools.partial(
        rdpjax.studies.coverage, jax.random.key(5), rdpjax.mechanisms.Gaussian(4.0), x, xp, [2],
        n=800, reps=6,
    )  # fmt: skip
    study()
    with compiled_names() as names:
        study(grid_points=1)
    ok = "jit(_bounds)" in names and "jit(_draws)" not in names
    return Check("jit(_bounds) only", f"{sorted(set(names) & _STUDY)}", ok)


_STUDY = {"jit(_draws)", "jit(_bounds)"}


def _cache_sizes(clear: bool = False) -> list[int]:
    """jax's count of ``lower_bound``'s programs of each kind (settings, binning, bound, the
    device map: ``BOUND_PROGRAMS``); then drop them."""
    from rdpjax.estimator import api

    fns = api.BOUND_PROGRAMS
    sizes = [fn._cache_size() for fn in fns]
    for fn in fns if clear else ():
        fn.clear_cache()
    return sizes


def program_budget(quick: bool) -> Check:
    """With a budget of 4, data sets in a new size bucket each never leave more than 4 programs.

    Counted by jax's own ``_cache_size()`` of the settings, binning and bound programs. From
    ``tests/estimator/test_bounds.py::
    test_a_process_bounding_many_data_sets_keeps_a_bounded_number_of_programs``; the test keeps
    the memory maps and the results.
    """
    from rdpjax.estimator import from_samples

    rng = np.random.default_rng(5)
    sizes = [int(700 * 1.25**k) for k in range(8 if quick else 16)]
    data = [(1 + rng.standard_normal(n), rng.standard_normal(n)) for n in sizes]
    most = 0
    with (
        mock.patch.object(programs, "PROGRAM_BUDGET", 4),
        mock.patch.object(programs, "_seen_programs", set()),
        mock.patch.object(from_samples, "MIN_PADDED_ROWS", 1),  # every size bucket its binning
    ):
        _cache_sizes(clear=True)
        for p, q in data:
            rdpjax.lower_bound(p, q, [2.0])
            most = max(most, *_cache_sizes())
    _cache_sizes(clear=True)
    return Check("≤ 4 programs of a kind", f"at most {most} ({len(sizes)} data sets)", most <= 4)


def padding_floor_programs(quick: bool) -> Check:
    """Samples up to ``MIN_PADDED_ROWS`` share programs: 1 settings, 1 binning and 1 bound a layout.

    From ``tests/estimator/test_bounds.py::test_samples_up_to_the_padding_floor_share_their_
    binning_and_settings_programs`` (now ``…_compile_nothing_on_a_repeat``)."""
    from rdpjax.estimator import api
    from rdpjax.estimator.from_samples import MIN_PADDED_ROWS

    planned = set()
    bin_program = api.bin_program

    def recording(plan, *args):
        planned.add((plan.shape, plan.pad, plan.half_width))
        return bin_program(plan, *args)

    rng = np.random.default_rng(12)
    sizes = [150, 900, 1_700, 3_100, 5_000, 9_000, 14_000, 21_000, MIN_PADDED_ROWS]
    data = [(1.0 + 5.0 * rng.standard_normal(n), 5.0 * rng.standard_normal(n)) for n in sizes]
    _cache_sizes(clear=True)
    with mock.patch.object(api, "bin_program", recording):
        for p, q in data:
            rdpjax.lower_bound(p, q, [2, 5, 7], transform=None)
    settings, binning, bound, _ = _cache_sizes()  # transform=None: no map
    layouts = len(planned)
    seen = f"settings {settings}, binning {binning}, bound {bound}; {layouts} layouts"
    ok = (settings, binning, bound) == (1, layouts, layouts) and layouts > 1
    return Check("1 settings; binning = bound = layouts (> 1)", seen, ok)


CHECKS: dict[str, Callable[[bool], Check]] = {
    f.__name__: f
    for f in (
        fusion_conditional_kept,
        fusion_conditional_under_vmap,
        fusion_boundaries_in_bound_of_draws,
        bound_compile_entry_counts,
        replicated_bounds_programs,
        streamed_bound_programs,
        coverage_programs,
        coverage_shares_the_bound_program,
        coverage_chunks_compile_their_draws,
        coverage_smaller_bound_batches,
        program_budget,
        padding_floor_programs,
    )
}


def run_checks(names, quick: bool) -> dict[str, Check]:
    """Run the named checks in order; a check that raises fails with the error as ``seen``."""
    results: dict[str, Check] = {}
    for name in names:
        try:
            results[name] = CHECKS[name](quick)
        except Exception as err:  # noqa: BLE001 - reported as a failed check, the rest still run
            results[name] = Check("no error", f"{type(err).__name__}: {err}", False)
    return results


def table(results: dict[str, Check]) -> str:
    """A markdown table: check, expected, seen, ok."""
    rows = ["| check | expected | seen | ok |", "|---|---|---|---|"]
    mark = {True: "yes", False: "**NO**", None: "skip"}
    rows += [f"| {n} | {c.expected} | {c.seen} | {mark[c.ok]} |" for n, c in results.items()]
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="+", choices=sorted(CHECKS), default=list(CHECKS))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    given = sys.argv[1:] if argv is None else list(argv)
    command = " ".join(["python benchmarks/performance/compiled_programs.py", *given])
    print(command)
    results = run_checks(args.only, args.quick)
    print(table(results))
    meta = {"command": command, "backend": jax.default_backend(), "quick": args.quick}
    write_json(args.out, meta, checks={n: c._asdict() for n, c in results.items()})
    return 1 if any(c.ok is False for c in results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
