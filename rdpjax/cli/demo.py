"""``rdpjax demo``: the Gaussian and Laplace mechanisms of paper 000 beside their exact values."""

from __future__ import annotations

from rdpjax.cli._args import subcommand
from rdpjax.cli._types import count, seed

__all__ = ["add_command", "run"]


def run(args) -> int:
    """Handler of ``rdpjax demo``."""
    from rdpjax.studies.demo import run_demo

    run_demo(n=args.n, seed=args.seed, as_json=args.json)
    return 0


def add_command(sub):
    """Add ``rdpjax demo`` to ``sub`` (from ``add_subparsers``)."""
    d = subcommand(
        sub,
        "demo",
        help="bounds for the Gaussian and Laplace mechanisms of paper 000 beside the exact values",
        description="Draw n outputs per side of the Gaussian and Laplace mechanisms (b = 5) on "
        "the databases (21) of arXiv:2212.04739 and print the lower bounds at λ = 2, 5, 7 "
        "beside the exact ε(λ). (`make demo` runs the fuller `rdpjax reproduce --quick`.)",
        examples=["rdpjax demo", "rdpjax demo --n 1e5 --json"],
    )
    d.add_argument("--n", type=count, default=10**6, help="samples per side (default 1e6)")
    d.add_argument("--seed", type=seed, default=0, help="PRNG seed (default 0)")
    d.add_argument("--json", action="store_true", help="print JSON instead of a table")
    d.set_defaults(func=run)
    return d
