"""``rdpjax reproduce``: the seven experiments of paper 000 §V, with coverage and figures.

rdpjax reproduce [--quick] [--n N ...] [--out DIR] [--cpu-devices K]
"""

from __future__ import annotations

import json
import sys

from rdpjax.cli._args import (
    Catalog,
    add_cpu_devices,
    add_experiments,
    add_level_and_seed,
    add_sizes,
    subcommand,
)
from rdpjax.cli._files import output_dir, run_meta, use_agg
from rdpjax.cli._types import CliError, count, reps

__all__ = ["add_command", "run"]


def run(args) -> int:
    """Handler of ``rdpjax reproduce``; input errors raise :class:`CliError`."""
    from rdpjax.studies.reproduction import format_table, reproduce, write_results

    if args.quick:
        n, n_reps, coverage_n = args.n or [10**5], args.reps or 50, args.coverage_n or 10**4
    else:
        n, n_reps, coverage_n = args.n or [10**7], args.reps or 200, args.coverage_n or 10**5
    out = None if args.out is None else output_dir(args.out, "--out")
    figures = None
    if out is not None and not args.no_figures:
        if use_agg():
            figures = out / "figures"
        else:
            print(
                "rdpjax reproduce: matplotlib is not installed; writing no figures "
                "(pip install matplotlib)",
                file=sys.stderr,
            )
    try:
        rows = reproduce(
            n=n,
            reps=n_reps,
            coverage_n=coverage_n,
            seed=args.seed,
            alpha=args.alpha,
            names=args.experiment or None,
            progress=not args.json,
            figures=figures,
        )
    except ValueError as err:
        raise CliError(str(err)) from err
    meta = run_meta(args, alpha=args.alpha, seed=args.seed)
    if figures is not None:
        meta["figures"] = sorted(str(p.relative_to(out)) for p in figures.glob("*.png"))
    if out is not None:
        try:
            write_results(rows, out, meta)
        except OSError as err:
            raise CliError(f"--out {args.out}: could not write the results ({err})") from err
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=1))
    else:
        print(format_table(rows))
        if out is not None:
            print(f"\nwrote {out / 'results.json'} and results.md", end="")
            print(f", and {len(meta['figures'])} figures in {figures}" if figures else "")
    return 0


def add_command(sub, listed: Catalog):
    """Add ``rdpjax reproduce`` to ``sub``; ``listed``: what its help lists."""
    r = subcommand(
        sub,
        "reproduce",
        help="the seven experiments of paper 000 §V at λ = 2, 5, 7, with coverage and figures",
        description="Audit the seven mechanisms of paper 000 §V (Laplace, Gaussian, both "
        "Poisson-subsampled, randomized response, shuffled RR, noisy gradient descent) on pair "
        "(21) at λ = 2, 5, 7, and measure the coverage of the bound over vmapped replications. "
        "Prints a table; --out also writes results.json, results.md and figures/ (per "
        "mechanism: the densities p̂, q̂, q̂_τ and the floor behind the bound, the bound vs λ, "
        "and, with several --n, the bound vs n; figures need matplotlib).",
        examples=[
            "rdpjax reproduce --quick                      # about 2 minutes on 2 CPU cores",
            "rdpjax reproduce --quick --n 1e4 1e5 --out results/",
            "rdpjax reproduce --out benchmarks/results/papers/paper_000   # n = 1e7, R = 200",
        ],
    )
    add_sizes(
        r,
        "outputs per database for the bounds; several values give one row per n and a "
        "bound-vs-n figure (default 1e7; --quick: 1e5)",
    )
    r.add_argument(
        "--reps",
        type=reps,
        default=None,
        help="replications of the coverage study (default 200; --quick: 50)",
    )
    r.add_argument(
        "--coverage-n",
        type=count,
        default=None,
        help="outputs per database in each replication (default 1e5; --quick: 1e4)",
    )
    add_experiments(r, listed.slugs, "run only this experiment")
    r.add_argument("--quick", action="store_true", help="small sizes: minutes on a laptop")
    r.add_argument(
        "--out", metavar="DIR", default=None, help="write results.json, results.md, figures/"
    )
    r.add_argument("--no-figures", action="store_true", help="with --out: skip the figures")
    add_level_and_seed(r)
    add_cpu_devices(r)
    r.add_argument("--json", action="store_true", help="print JSON, no progress lines")
    r.set_defaults(func=run)
    return r
