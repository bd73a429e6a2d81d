"""``rdpjax audit``: audit a zoo mechanism, or the user's own, against a privacy claim.

    rdpjax audit MECHANISM [--param NAME=VALUE ...] [--x JSON|FILE.npy --x-prime JSON|FILE.npy]
    rdpjax audit FILE.py:FUNCTION --x JSON|FILE.npy --x-prime JSON|FILE.npy [--numpy] [--discrete]
                 [--project FILE.py:FUNCTION | --project learn]
                 [--claim-epsilon E | --claim-zcdp RHO | --claim-gdp MU | --claim-rdp 2=0.1,... |
                  --claim-dpsgd σ,q,T]
                 [--lam λ ...] [--n N] [--alpha A] [--seed S] [--one-direction]
                 [--transform auto|none|quantile] [--tpr-at-fpr F ...] [--json | --quiet]
                 [--plot FILE.png] [--report DIR]
                 [--until-refuted [--max-n N] [--resume DIR]] [--python PATH]

``FUNCTION`` is a JAX sampler ``sample(key, database, n)`` (wrapped by
:func:`rdpjax.mechanisms.from_sampler`) or, with ``--numpy``, a black box ``sample(rng, database,
n)`` called with a ``numpy.random.Generator`` (``--python PATH``: in that interpreter,
:mod:`rdpjax.cli._remote`). ``--until-refuted`` audits sequentially (looks of
growing size up to ``--max-n``, stopping at the first refutation;
:mod:`rdpjax.auditing.sequential`), its
draws checkpointed in the ``--report`` folder, from which ``--resume DIR`` continues. Exit
status: 0, or 1 when the claim is refuted, 2 on an input error or an error raised by the user's
code (its traceback is printed), 130 when interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rdpjax.cli._args import (
    Catalog,
    add_claim_options,
    add_lam,
    add_level_and_seed,
    add_zoo_options,
    claim_from_args,
    subcommand,
    zoo_mechanism,
)
from rdpjax.cli._files import (
    output_dir,
    output_file,
    plot_suffixes,
    read_database,
    run_meta,
    settings,
    use_agg,
)
from rdpjax.cli._loading import UserCodeError, is_reference, load_function
from rdpjax.cli._remote import add_python_option, remote_sampler
from rdpjax.cli._sizes import LARGE_N, MAX_N, check_size, size_warning, time_notice
from rdpjax.cli._types import CliError, count, order

__all__ = ["LARGE_N", "MAX_N", "add_command", "run", "size_warning"]

_JAX_HINT = (
    "rdpjax called it as a JAX sampler f(key, database, n); for numpy code taking a "
    "numpy.random.Generator, add --numpy"
)
_NUMPY_HINT = (
    "with --numpy rdpjax calls f(rng, database, n), rng a numpy.random.Generator; for a JAX "
    "sampler f(key, database, n), drop --numpy"
)


def _mechanism(args, modules: dict):
    """``(mechanism, x, x')`` from the MECHANISM argument and its options.

    The mechanism is a zoo mechanism, a :func:`~rdpjax.mechanisms.from_sampler` around the user's
    JAX sampler, or (``--numpy``) the user's callable itself.
    """
    text = args.mechanism
    if not is_reference(text):
        if args.numpy or args.discrete:
            flag = "--numpy" if args.numpy else "--discrete"
            raise CliError(
                f"{flag} describes your own function (FILE.py:FUNCTION); a zoo mechanism's "
                "outputs are known"
            )
        if text.endswith(".py") or "/" in text:
            raise CliError(f"{text!r}: name the function too, as {text}:FUNCTION")
        mech = zoo_mechanism(text, args.param)
        if (args.x is None) != (args.x_prime is None):
            raise CliError("give both --x and --x-prime, or neither (the reference pair)")
        if args.x is None:
            try:
                x, x_prime = mech.reference_pair()
            except ValueError as err:
                raise CliError(str(err)) from err
        else:
            x, x_prime = read_database(args.x, "--x"), read_database(args.x_prime, "--x-prime")
        return mech, x, x_prime
    if args.param:
        raise CliError("--param sets a zoo mechanism's parameters; your function takes its own")
    if args.python is not None:  # a --numpy function, run in that interpreter
        x, x_prime = _databases(args)
        return remote_sampler(text, args.python), x, x_prime
    fn = load_function(text, cache=modules, hint=_NUMPY_HINT if args.numpy else _JAX_HINT)
    x, x_prime = _databases(args)
    if args.numpy:
        return fn, x, x_prime  # rdpjax.audit calls a plain callable with a numpy Generator
    from rdpjax.mechanisms import from_sampler

    return from_sampler(fn, discrete=args.discrete, name=fn.__name__), x, x_prime


def _databases(args):
    """``(x, x')`` of the user's own mechanism (``--x`` and ``--x-prime`` required)."""
    missing = [flag for flag, v in (("--x", args.x), ("--x-prime", args.x_prime)) if v is None]
    if missing:
        raise CliError(
            f"{' and '.join(missing)} required for your own mechanism: the two adjacent "
            "databases, as JSON lists such as '[1, 0]' or .npy files"
        )
    return read_database(args.x, "--x"), read_database(args.x_prime, "--x-prime")


def _plot(report, path) -> None:
    import matplotlib.pyplot as plt

    if report.looks:  # a sequential audit: the bound and the claim at every look
        from rdpjax.auditing.sequential.plot import plot_looks

        figure = plot_looks(report).figure
    else:  # the bounds; the trade-off points too for a claim of sets; the verdict on top
        from rdpjax.auditing.plots import plot_report

        figure = plot_report(report)
    try:
        figure.savefig(path, dpi=120)
    except OSError as err:
        raise CliError(f"--plot {path}: could not write it ({err})") from err
    finally:
        plt.close(figure)


def _say_how_long(mechanism, x, n: int, n_given: bool) -> None:
    """A slow numpy black box: the time its draws take, said on stderr before they start."""
    try:
        note = time_notice(mechanism, x, n, n_given=n_given)
    except Exception:  # noqa: BLE001  (the user's code: the audit itself reports its errors)
        return
    if note is not None:
        print(f"rdpjax audit: note: {note}", file=sys.stderr)


def _sequential_options(args, report_dir):
    """``audit``'s size arguments and the report folder (``--resume DIR`` writes its report to DIR).

    The size argument is ``n=``: a whole number, or a :class:`rdpjax.auditing.Looks` (sequential).
    """
    if args.resume is not None:
        if not args.until_refuted:
            raise CliError("--resume continues a sequential audit: add --until-refuted")
        if not Path(args.resume).is_dir():  # a folder to continue from, not one to create
            raise CliError(f"--resume {args.resume}: no such folder (no checkpoint to resume)")
        resume_dir = output_dir(args.resume, "--resume")  # checks that it is writable
        if report_dir is not None and report_dir.resolve() != resume_dir.resolve():
            raise CliError("--resume DIR writes its report to DIR; drop --report or make it DIR")
        report_dir = resume_dir
    check_size("--n", args.n)
    check_size("--max-n", args.max_n)
    if not args.until_refuted:
        if args.max_n is not None:
            raise CliError("--max-n is for a sequential audit: add --until-refuted (or use --n)")
        return {"n": 10**6 if args.n is None else args.n}, report_dir
    if args.n is not None:
        raise CliError("--until-refuted draws up to --max-n outputs per database; drop --n")
    from rdpjax.auditing import Looks

    max_n = 10**6 if args.max_n is None else args.max_n
    looks = Looks(max_n=max_n, checkpoint=report_dir, resume=args.resume is not None)
    return {"n": looks}, report_dir


def _kept(report_dir) -> str:
    return (
        f"the outputs drawn so far are kept in {report_dir}; run the same command with "
        f"--resume {report_dir} to continue"
    )


def _interrupted(args, report_dir) -> str:
    """What an interrupted audit kept, and how to do better next time."""
    if args.until_refuted and report_dir is not None:
        return _kept(report_dir)
    if args.until_refuted:
        return (
            "the draws were not kept (add --report DIR to checkpoint them: the audit can then "
            "be resumed with --resume DIR)"
        )
    return (
        "the draws of a fixed-n audit are not kept; an audit with --until-refuted --max-n N "
        "--report DIR checkpoints them and can be resumed with --resume DIR"
    )


def run(args) -> int:
    """Handler of ``rdpjax audit``: 1 when the claim is refuted, else 0.

    Input errors raise :class:`CliError`, errors in the user's code
    :class:`~rdpjax.cli._loading.UserCodeError`.
    """
    # Every check before the audit, which may run for minutes.
    claim = claim_from_args(args)
    modules: dict = {}
    mechanism, x, x_prime = _mechanism(args, modules)
    try:
        return _audit(args, claim, modules, mechanism, x, x_prime)
    finally:
        if args.python is not None:
            mechanism.close()  # the worker exits (also on an error or Ctrl-C)


def _audit(args, claim, modules, mechanism, x, x_prime) -> int:
    import jax

    from rdpjax.auditing import audit
    from rdpjax.auditing.draws import OutputDimensionError
    from rdpjax.auditing.remote import RemoteError

    project = args.project
    if project is not None and project != "learn":
        project = load_function(project, cache=modules)
    plot = None
    if args.plot is not None:
        if not use_agg():
            raise CliError("--plot needs matplotlib (pip install matplotlib)")
        plot = output_file(args.plot, "--plot", suffixes=plot_suffixes())
    report_dir = None if args.report is None else output_dir(args.report, "--report")
    options = {"discrete": True} if args.numpy and args.discrete else {}  # lower_bound's
    if args.transform is not None:
        options["transform"] = None if args.transform == "none" else args.transform
    if args.tpr_at_fpr:
        options["tpr_at_fpr"] = tuple(args.tpr_at_fpr)
    sizes, report_dir = _sequential_options(args, report_dir)

    quiet = args.json or args.quiet
    warning = None if args.until_refuted else size_warning(sizes["n"])
    if warning is not None:
        print(f"rdpjax audit: warning: {warning}", file=sys.stderr)
    try:
        if warning is None and not args.until_refuted and (args.numpy or args.python):
            _say_how_long(mechanism, x, sizes["n"], n_given=args.n is not None)
        report = audit(
            jax.random.key(args.seed),
            mechanism,
            x,
            x_prime,
            args.lam,
            **sizes,
            alpha=args.alpha,
            both_directions=not args.one_direction,
            project=project,
            claim=claim,
            progress=False if quiet else (True if sys.stderr.isatty() else None),
            densities=report_dir is not None and not args.until_refuted,
            **options,
        )
    except OutputDimensionError as err:  # the same advice, in the command line's terms
        raise CliError(
            f"the outputs have d = {err.dim} coordinates (checked before drawing them all); the "
            f"test takes continuous outputs of d ≤ {err.most}: add --project learn (a score "
            "learned on a part of the draws, then frozen; with --until-refuted too) or --project "
            f"FILE.py:FUNCTION mapping a batch to {err.shape}"
        ) from err
    except (ValueError, RemoteError) as err:
        raise CliError(str(err)) from err
    except KeyboardInterrupt:
        raise KeyboardInterrupt(_interrupted(args, report_dir)) from None
    except UserCodeError:
        if args.until_refuted and report_dir is not None:
            print(f"rdpjax audit: {_kept(report_dir)}", file=sys.stderr)
        raise

    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
    elif args.quiet:
        print(report.verdict())
    else:
        print(report.describe(verbose=args.verbose))
    sys.stdout.flush()  # the result is out before any file is written
    if plot is not None:
        _plot(report, plot)
        if not quiet:
            print(f"wrote {plot}")
    if report_dir is not None:
        from rdpjax.auditing.writer import write_report

        meta = run_meta(args, **settings(args))
        if args.python is not None:  # the other interpreter: its path, Python and numpy
            meta["interpreter"] = mechanism.interpreter
        try:
            paths = write_report(report, report_dir, meta=meta)
        except (OSError, ValueError) as err:
            raise CliError(f"--report {args.report}: {err}") from err
        if not quiet:
            print("wrote " + ", ".join(str(p) for p in paths))
    return 1 if report.is_refuted else 0


def add_command(sub, listed: Catalog):
    """Add ``rdpjax audit`` to ``sub`` (from ``add_subparsers``)."""
    a = subcommand(
        sub,
        "audit",
        help="audit a zoo mechanism, or your own function, against a privacy claim",
        description="Draw n outputs of a mechanism on two adjacent databases, bound ε(λ) from "
        "below in both directions (simultaneously over the orders), and check the bounds "
        "against a privacy claim. MECHANISM is a zoo name (on its reference pair, pair (21) of "
        "arXiv:2212.04739 for paper 000's mechanisms, unless --x/--x-prime are given; its own "
        "claim is checked unless another is given) or your own function: FILE.py:FUNCTION or "
        "package.module:function, a JAX sampler f(key, database, n) or, with --numpy, "
        "f(rng, database, n) with rng a numpy.random.Generator. Exit status: 0, or 1 when the "
        "claim is refuted, 2 on an input error or an error raised in your code (its traceback "
        "is printed).",
        examples=[
            "rdpjax audit laplace --n 1e5",
            "rdpjax audit orthogonal-series --param k=2 --param ties=literal --lam 2 5 7 --n 1e5",
            "rdpjax audit mech.py:noisy_sum --numpy --x '[2, 1]' --x-prime '[0, 1]' "
            "--claim-epsilon 1",
            "rdpjax audit mech.py:sampler --x x.npy --x-prime x_prime.npy --claim-zcdp 0.5 "
            "--report audit/",
            "rdpjax audit mech.py:noisy_sum --numpy --x '[1]' --x-prime '[0]' --claim-epsilon 1 "
            "--until-refuted --max-n 1e5 --report audit/",
        ],
        notes=listed.zoo_listing,
    )
    add_python_option(a)
    add_zoo_options(
        a,
        listed.zoo_names,
        help="a zoo mechanism (listed below) or your function: FILE.py:FUNCTION or "
        "package.module:function",
    )
    a.add_argument(
        "--x",
        metavar="JSON|FILE.npy",
        default=None,
        help="the database x, a JSON list such as '[1, 0]' or a .npy file (required for your "
        "own function; a zoo mechanism defaults to its reference pair)",
    )
    a.add_argument(
        "--x-prime",
        metavar="JSON|FILE.npy",
        default=None,
        help="the adjacent database x' (as --x)",
    )
    a.add_argument(
        "--numpy",
        action="store_true",
        help="your function is numpy code f(rng, database, n), rng a numpy.random.Generator "
        "(default: a JAX sampler f(key, database, n))",
    )
    a.add_argument(
        "--discrete",
        action="store_true",
        help="your function's outputs are integers (counted as discrete outcomes)",
    )
    a.add_argument(
        "--project",
        metavar="FILE.py:FUNCTION|learn",
        default=None,
        help="a fixed function applied to the outputs (arrays in, array out) before bounding; "
        "'learn': learn a 1-D score on a fifth of the draws (up to three fifths in high "
        "dimension), freeze it, certify on the rest",
    )
    add_claim_options(a, dpsgd="checked through its RDP curve")
    add_lam(
        a,
        parse=order,
        default=None,
        note="2 5 7, or with a claim the wide grid 1.5 … 30 of rdpjax.claims.orders.CLAIM_ORDERS",
    )
    a.add_argument("--n", type=count, default=None, help="outputs per database (default 1e6)")
    seq = a.add_argument_group("sequential audit (stop as soon as the claim is refuted)")
    seq.add_argument(
        "--until-refuted",
        action="store_true",
        help=f"draw in looks of growing size ({listed.looks} up to --max-n per database) and "
        "stop at the first look whose bound refutes the claim; all looks together hold at 1 − "
        "alpha. With --report DIR the draws are checkpointed in DIR",
    )
    seq.add_argument(
        "--max-n",
        type=count,
        default=None,
        help="outputs per database at the last look (default 1e6)",
    )
    seq.add_argument(
        "--resume",
        metavar="DIR",
        default=None,
        help="continue the interrupted sequential audit checkpointed in DIR (the same command, "
        "plus --resume DIR; its report is written to DIR)",
    )
    add_level_and_seed(a)
    a.add_argument("--one-direction", action="store_true", help="bound only D_λ(P‖Q)")
    a.add_argument(
        "--transform",
        choices=["auto", "none", "quantile"],
        default=None,
        help="continuous outputs: 'quantile' maps them by a quantile map fitted on a pilot split "
        "(every 16th draw, set aside) before the KDE, tighter for multimodal, spiky or "
        "heavy-tailed outputs; 'none' keeps them; default 'auto': the map for 1-D draws in "
        "memory whose pilot has tails as heavy as a Laplace law's or two separated modes "
        "('quantile' with --project learn)",
    )
    a.add_argument(
        "--tpr-at-fpr", metavar="F", type=float, nargs="+", default=None,
        help="also certify a distinguisher's TPR at these FPRs, x the positives (exact "
        "intervals, the FPR reached; with an ε-DP, (ε, δ) or GDP claim, fixed n)",
    )  # fmt: skip
    out = a.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON (no progress bar)")
    out.add_argument(
        "--quiet",
        action="store_true",
        help="print only the verdict line (no table, no progress bar); the exit status says "
        "whether the claim was refuted",
    )
    out.add_argument(
        "--verbose",
        action="store_true",
        help="also print the methods' details: the pilot's quantile map, the certified rejection "
        "sets and pooled guesses, the betting test's best bet (all are in --report's files)",
    )
    a.add_argument(
        "--plot",
        metavar="FILE.png",
        default=None,
        help="write a plot of the bounds and the claim against λ (with --until-refuted: at "
        "every look, against n; folders are created)",
    )
    a.add_argument(
        "--report",
        metavar="DIR",
        default=None,
        help="write report.md, report.json (with the command, seed, versions and every setting) "
        "and a figure to DIR (created if missing)",
    )
    a.set_defaults(func=run)
    return a
