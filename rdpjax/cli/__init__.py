"""The ``rdpjax`` command line.

    rdpjax bound P Q [--lam 2 5 7] [--alpha A] [--discrete | --continuous] [--claim-… C] [--json]
    rdpjax audit MECHANISM [--param NAME=VALUE ...] [--lam 2 5 7] [--n 1e6] [--claim-… C]
                 [--json | --quiet] [--plot F.png] [--report DIR]
    rdpjax audit FILE.py:FUNCTION --x '[1, 0]' --x-prime '[0, 0]' [--numpy] [--discrete]
                 [--project FILE.py:FUNCTION] [--claim-epsilon E | --claim-zcdp RHO | …]
    rdpjax coverage MECHANISM [--param NAME=VALUE ...] --lam 2 5 7 --n 1e4 [--n ...] --reps R
    rdpjax coverage --experiment NAME | --all  [--n ...] [--reps R] [--cpu-devices K] [--json]
    rdpjax reproduce [--quick] [--n N ...] [--out DIR] [--cpu-devices K]
    rdpjax demo [--n N] [--seed S] [--json]
    rdpjax search MECHANISM [--param NAME=VALUE ...] [--lam 2 5 7] [--steps S] [--reference]
    rdpjax canaries SCORES.csv [--claim-epsilon E [--claim-delta D] | --claim-gdp MU | …] [--json]
    rdpjax --version

One module per subcommand (``bound``, ``audit``, ``canaries``, ``coverage``, ``reproduce``,
``demo``, ``search``), each with ``add_command(subparsers)`` and its handler ``run(args)``;
argument types in :mod:`rdpjax.cli._types`, shared options in :mod:`rdpjax.cli._args`, files and
records in :mod:`rdpjax.cli._files`, loading the user's code in :mod:`rdpjax.cli._loading`.

The ``rdpjax`` program (:func:`console_main`) keeps jax's compiled programs in a persistent cache
between runs (:mod:`rdpjax.compilation_cache`).

Exit status: 0 on success; 1 when ``audit``, ``bound`` or ``canaries`` refutes the claim; 2 on a
usage or input error, reported as one line on stderr, or on an error raised by the user's code,
reported as its traceback followed by one line naming the function; 130 when interrupted.
"""

from __future__ import annotations

import sys

from rdpjax.cli import audit, bound, canaries, coverage, demo, reproduce, search
from rdpjax.cli._args import catalog, set_cpu_devices
from rdpjax.cli._loading import UserCodeError, format_user_error
from rdpjax.cli._types import CliError, Parser
from rdpjax.cli.bound import read_samples

__all__ = ["CliError", "UserCodeError", "build_parser", "console_main", "main", "read_samples"]


def build_parser(*, help_text: bool = True) -> Parser:
    """The ``rdpjax`` argument parser with every subcommand.

    Args:
      help_text: list the paper's experiments in ``coverage`` and ``reproduce``'s help. Listing
        them imports the mechanisms (and jax, about a second); :func:`main` asks for it only
        when the command line asks for help, so a mistake in the arguments is answered at once.
    """
    import rdpjax

    parser = Parser(
        prog="rdpjax",
        description="Black-box statistical lower bounds on the Rényi-DP parameter ε(λ) "
        "(Kutta, Askin, Dunsche, arXiv:2212.04739).",
        epilog="Run `rdpjax COMMAND --help` for a command's options and examples.",
    )
    parser.add_argument("--version", action="version", version=f"rdpjax {rdpjax.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    listed = catalog(help_text)
    bound.add_command(sub)
    audit.add_command(sub, listed)
    canaries.add_command(sub)
    coverage.add_command(sub, listed)
    reproduce.add_command(sub, listed)
    demo.add_command(sub)
    search.add_command(sub, listed)
    return parser


def main(argv=None, *, compilation_cache: bool = False) -> int:
    """Run the command ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    The arguments are parsed before jax is imported, so a mistake in them is answered in a
    fraction of a second. ``compilation_cache`` turns on jax's persistent cache (once they parse).

    Usage errors found by the parser exit through ``SystemExit(2)`` (``--help`` and
    ``--version`` through ``SystemExit(0)``), as argparse does.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(help_text=any(a in ("-h", "--help") for a in argv))
    args = parser.parse_args(argv)
    args.argv = argv
    if compilation_cache:
        from rdpjax.compilation_cache import enable_compilation_cache

        enable_compilation_cache()
    try:
        set_cpu_devices(getattr(args, "cpu_devices", None))
        return args.func(args)
    except CliError as err:
        print(f"rdpjax {args.command}: error: {err}", file=sys.stderr)
        return 2
    except UserCodeError as err:
        sys.stdout.flush()
        print(format_user_error(err, args.command), end="", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        # A handler may say what was kept (KeyboardInterrupt(detail)). On a terminal the line
        # starts on a fresh line, after the ^C the terminal echoed.
        detail = f"; {err}" if str(err) else ""
        lead = "\n" if sys.stderr.isatty() else ""
        print(f"{lead}rdpjax {args.command}: interrupted{detail}", file=sys.stderr)
        return 130


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr (a command line shows no source lines)."""
    print(f"rdpjax: warning: {message}", file=sys.stderr if file is None else file)


def console_main() -> int:
    """The ``rdpjax`` program: :func:`main` on ``sys.argv``, with the cache on and short warnings.

    jax's persistent compilation cache is turned on once the arguments parse
    (:mod:`rdpjax.compilation_cache`; ``RDPJAX_NO_CACHE=1`` turns it off), warnings are shown as
    one line each, then :func:`main` runs on ``sys.argv``.
    """
    import warnings

    warnings.showwarning = _one_line_warning
    return main(compilation_cache=True)
