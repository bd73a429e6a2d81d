"""``rdpjax coverage``: how often the bound holds, over R replications with a known truth.

rdpjax coverage MECHANISM [--param NAME=VALUE ...] --lam 2 5 7 --n 1e4 [--n ...] --reps R
rdpjax coverage --experiment NAME | --all  [--n ...] [--reps R] [--cpu-devices K] [--json]
"""

from __future__ import annotations

import json

from rdpjax.cli._args import (
    Catalog,
    add_cpu_devices,
    add_experiments,
    add_lam,
    add_level_and_seed,
    add_sizes,
    add_zoo_options,
    subcommand,
    zoo_mechanism,
)
from rdpjax.cli._files import run_meta
from rdpjax.cli._types import CliError, order, reps

__all__ = ["add_command", "run"]


def _targets(args) -> list[tuple[str, object, object, object]]:
    """``(label, mechanism, x, x')`` for each mechanism or experiment the command names."""
    from rdpjax.mechanisms.databases import paper_pair
    from rdpjax.studies.reproduction import EXPERIMENTS, resolve_experiment

    if args.all or args.experiment:
        if args.mechanism is not None:
            raise CliError("name either a MECHANISM or --experiment/--all, not both")
        if args.param:
            raise CliError("--param applies to a MECHANISM; the experiments use paper 000's")
        try:
            names = (
                list(EXPERIMENTS) if args.all else [resolve_experiment(e) for e in args.experiment]
            )
        except ValueError as err:
            raise CliError(str(err)) from err
        x, x_prime = paper_pair()
        return [(name, EXPERIMENTS[name](), x, x_prime) for name in dict.fromkeys(names)]
    if args.mechanism is None:
        raise CliError("name a MECHANISM, --experiment NAME or --all (see rdpjax coverage --help)")
    mech = zoo_mechanism(args.mechanism, args.param)
    label = args.mechanism
    if args.param:
        label += "(" + ", ".join(args.param) + ")"
    try:
        x, x_prime = mech.reference_pair()
    except ValueError as err:
        raise CliError(str(err)) from err
    return [(label, mech, x, x_prime)]


def run(args) -> int:
    """Handler of ``rdpjax coverage``; input errors raise :class:`CliError`."""
    from rdpjax.auditing.draws import exact_divergences
    from rdpjax.studies import format_coverage
    from rdpjax.studies.reproduction import coverage_cells

    targets = _targets(args)
    lam = list(dict.fromkeys(args.lam))
    sizes = sorted(set(args.n or [10**4]))
    for label, mech, x, x_prime in targets:  # every check before the first (long) study
        try:
            exact = exact_divergences(mech, x, x_prime, lam, args.both_directions)
        except ValueError as err:
            raise CliError(f"{label}: {err}") from err
        if exact is None:
            raise CliError(
                f"{label} has no exact divergence on its reference pair at λ = {lam}; "
                "coverage needs the truth"
            )
    jobs = [(label, mech, x, x_prime, n) for label, mech, x, x_prime in targets for n in sizes]
    try:
        cells = list(
            coverage_cells(
                jobs,
                progress=not args.json,
                lam=lam,
                reps=args.reps,
                seed=args.seed,
                alpha=args.alpha,
                both_directions=args.both_directions,
            )
        )
    except ValueError as err:
        raise CliError(str(err)) from err
    meta = run_meta(
        args,
        lam=lam,
        reps=args.reps,
        alpha=args.alpha,
        seed=args.seed,
        both_directions=args.both_directions,
    )
    if args.json:
        print(json.dumps({"meta": meta, "cells": cells}, indent=1))
        return 0
    bounds = len(lam) * (2 if args.both_directions else 1)
    what = "max over both directions" if args.both_directions else "D_λ(P‖Q)"
    print(
        f"coverage of the lower bound on {what} over R = {args.reps} replications "
        f"(seed {args.seed})\nnominal: each bound ≥ {1 - args.alpha / bounds:.4g} (level α/K, "
        f"K = {bounds}); simultaneous ≥ {1 - args.alpha:.4g}\n"
    )
    print(format_coverage(cells))
    return 0


def add_command(sub, listed: Catalog):
    """Add ``rdpjax coverage`` to ``sub``; ``listed``: what its help lists."""
    c = subcommand(
        sub,
        "coverage",
        help="how often the bound holds: R replications with a known truth",
        description="Measure the coverage of the lower bound: draw R independent replications "
        "of n outputs on each of two adjacent databases, bound ε(λ) in each, and count how "
        "often the bound is at or below the exact value. The R replications run vmapped in one "
        "compiled call per (mechanism, n). Prints, per mechanism, n and λ: the empirical "
        "coverage with its Wilson 95% interval, the simultaneous coverage (every λ held in the "
        "same replication) and the mean tightness lower/exact. A zoo MECHANISM runs on its "
        "reference pair; --experiment and --all take paper 000's experiments (§V, pair (21), "
        "the paper's parameters): " + ", ".join(listed.slugs) + ".",
        examples=[
            "rdpjax coverage laplace --n 1e4 --reps 200",
            "rdpjax coverage gaussian --param scale=2 --lam 2 5 7 --n 1e4 --n 1e5 --reps 100",
            "rdpjax coverage --experiment shuffled-rr --experiment noisy-gd --reps 50 --json",
            "rdpjax coverage --all --n 1e4 1e5 --reps 200",
        ],
        notes=listed.zoo_listing,
    )
    add_zoo_options(c, listed.zoo_names, optional=True)
    add_experiments(c, listed.slugs, "a paper-000 experiment")
    c.add_argument("--all", action="store_true", help="all seven paper-000 experiments")
    add_lam(c, parse=order)
    add_sizes(
        c,
        "outputs per database in each replication; several values (or repeated --n) run one "
        "study per n (default 1e4)",
    )
    c.add_argument("--reps", type=reps, default=200, help="replications R per study (default 200)")
    add_level_and_seed(c)
    c.add_argument(
        "--both-directions",
        action="store_true",
        help="bound both directions; the truth is then the larger divergence",
    )
    add_cpu_devices(c)
    c.add_argument("--json", action="store_true", help="print JSON, no progress lines")
    c.set_defaults(func=run)
    return c
