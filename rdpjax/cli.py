"""The ``rdpjax`` command line.

    rdpjax bound P Q --lam 2 5 7 [--alpha A] [--discrete | --continuous] [--json]
    rdpjax audit MECHANISM [--param NAME=VALUE ...] --lam 2 5 7 --n 1e6 [--json] [--plot F.png]
    rdpjax coverage MECHANISM [--param NAME=VALUE ...] --lam 2 5 7 --n 1e4 [--n ...] --reps R
    rdpjax coverage --experiment NAME | --all  [--n ...] [--reps R] [--cpu-devices K] [--json]
    rdpjax reproduce [--quick] [--n N ...] [--out DIR] [--cpu-devices K]
    rdpjax demo [--n N] [--seed S] [--json]
    rdpjax search MECHANISM [--param NAME=VALUE ...] [--lam 2 5 7] [--steps S] [--reference]

Errors in the input are reported on one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import textwrap
from pathlib import Path

import numpy as np

__all__ = ["main", "read_samples"]


class CliError(Exception):
    """An input problem, reported as one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def read_samples(path: str | Path) -> np.ndarray:
    """Read samples from ``.npy``, ``.csv`` or ``.txt`` (whitespace or comma separated).

    One sample per row; several columns make a d-dimensional sample. Lines starting with ``#``
    are comments (put a header line behind ``#``).

    Raises:
      ValueError: if the file is missing, has another extension, or cannot be parsed.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif suffix in (".csv", ".txt"):
            text = path.read_text()
            delimiter = "," if suffix == ".csv" or "," in text else None
            arr = np.loadtxt(path, delimiter=delimiter, ndmin=1, comments="#")
        else:
            raise ValueError(f"{path}: unsupported file type {suffix!r} (use .npy, .csv or .txt)")
    except ValueError as err:
        if str(err).startswith(str(path)):
            raise
        raise ValueError(f"{path}: could not read samples ({err})") from err
    except OSError as err:
        raise ValueError(f"{path}: could not read samples ({err})") from err
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    return arr


def _number(text: str, valid, requirement: str) -> float:
    """``float(text)`` if it is finite and ``valid``; else an argparse error naming the rule."""
    try:
        value = float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from err
    if not math.isfinite(value) or not valid(value):
        raise argparse.ArgumentTypeError(f"{requirement}: {text!r}")
    return value


def _positive_float(text: str) -> float:
    return _number(text, lambda v: v > 0, "must be a finite positive number")


def _whole(text: str, least: int) -> int:
    rule = f"must be a whole number ≥ {least}"
    return int(_number(text, lambda v: v == int(v) and v >= least, rule))


def _count(text: str) -> int:
    """A sample size: a whole number ≥ 2 (``1e6`` is accepted)."""
    return _whole(text, 2)


def _reps(text: str) -> int:
    """A number of replications: a whole number ≥ 1."""
    return _whole(text, 1)


def _cpu_devices(text: str) -> int:
    """``auto`` (one per core this process may run on) or a whole number ≥ 1."""
    if text.strip().lower() != "auto":
        return _whole(text, 1)
    from rdpjax.sharding import cpu_cores  # imports jax, but starts no backend

    return cpu_cores()


def _order(text: str) -> float:
    """An order λ: a finite number > 1."""
    return _number(text, lambda v: v > 1, "an order λ must be finite and > 1")


def _alpha(text: str) -> float:
    """A family-wise error level in (0, 0.5)."""
    return _number(text, lambda v: 0 < v < 0.5, "must be in (0, 0.5)")


def _command_line(args) -> str:
    """The command as typed (for the records that results files keep)."""
    return shlex.join(["rdpjax", *args.argv])


def _cmd_bound(args) -> int:
    import rdpjax

    try:
        p = read_samples(args.p)
        q = read_samples(args.q)
        bound = rdpjax.lower_bound(
            p,
            q,
            args.lam,
            alpha=args.alpha,
            discrete=args.discrete,
            bandwidth=args.bandwidth,
            floor=args.floor,
            beta=args.beta,
            grid_size=args.grid_size,
            both_directions=args.both_directions,
        )
    except ValueError as err:
        raise CliError(str(err)) from err
    if args.json:
        print(json.dumps(bound.to_dict(), indent=1))
    else:
        print(f"Rényi-DP lower bounds from {args.p} (P) and {args.q} (Q)")
        print(bound)
    return 0


def _mechanism_factories() -> dict:
    """CLI names of the zoo, each a factory whose keyword defaults are the papers' parameters."""
    from rdpjax import mechanisms as m

    return {
        "laplace": lambda scale=5.0: m.Laplace(scale),
        "gaussian": lambda scale=5.0: m.Gaussian(scale),
        "subsampled-laplace": lambda scale=5.0, rate=0.5: m.PoissonSubsampled(
            m.Laplace(scale), rate
        ),
        "subsampled-gaussian": lambda scale=5.0, rate=0.5: m.PoissonSubsampled(
            m.Gaussian(scale), rate
        ),
        "randomized-response": lambda eps0=1.5: m.RandomizedResponse(eps0),
        "shuffled-randomized-response": lambda eps0=1.5: m.ShuffledRandomizedResponse(eps0),
        "noisy-gd": lambda step_size=0.2, noise=1.0, steps=10: m.NoisyGradientDescent(
            step_size, noise, int(steps)
        ),
        "truncated-laplace": lambda scale=1.0: m.TruncatedLaplace(scale),
        "truncated-gaussian": lambda scale=0.5: m.TruncatedGaussian(scale),
        "kary-randomized-response": lambda alpha=1.0, k=5: m.KaryRandomizedResponse(alpha, int(k)),
        "onehot-randomized-response": lambda alpha=1.0, k=5: m.OneHotRandomizedResponse(
            alpha, int(k)
        ),
        "laplace-histogram": lambda alpha=1.0, bins=5: m.LaplaceHistogram(alpha, int(bins)),
        "orthogonal-series": lambda alpha=1.0, k=3, ties="split": m.OrthogonalSeries(
            alpha, int(k), ties=ties
        ),
        "report-noisy-max": lambda eps=1.0, output_kind="index": m.ReportNoisyMax(
            eps, output_kind=output_kind
        ),
        "sparse-vector": lambda eps=1.0, variant="lyu": m.SparseVector(eps, variant=variant),
    }


def _parse_params(items: list[str], factory) -> dict:
    import inspect

    allowed = inspect.signature(factory).parameters
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--param expects NAME=VALUE; got {item!r}")
        if name not in allowed:
            raise CliError(f"unknown parameter {name!r}; this mechanism takes {', '.join(allowed)}")
        try:
            params[name] = float(value)
        except ValueError:
            params[name] = value
    return params


def _zoo_mechanism(name: str, param_items: list[str]):
    """The zoo mechanism ``name`` with ``--param NAME=VALUE`` overrides (CliError if bad)."""
    factories = _mechanism_factories()
    if name not in factories:
        raise CliError(f"unknown mechanism {name!r}; choose one of: {', '.join(sorted(factories))}")
    factory = factories[name]
    params = _parse_params(param_items, factory)
    try:
        return factory(**params)
    except ValueError as err:
        raise CliError(str(err)) from err


def _cmd_audit(args) -> int:
    import jax

    from rdpjax.audit import audit

    mech = _zoo_mechanism(args.mechanism, args.param)
    try:
        x, x_prime = mech.reference_pair()
        report = audit(
            mech,
            x,
            x_prime,
            args.lam,
            n=args.n,
            key=jax.random.key(args.seed),
            alpha=args.alpha,
            both_directions=not args.one_direction,
        )
    except ValueError as err:
        raise CliError(str(err)) from err
    if args.plot:
        _plot_audit(report, args.plot)
    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
    else:
        print(report)
    return 0


def _plot_audit(report, path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise CliError("--plot needs matplotlib (pip install matplotlib)") from err
    fig, ax = plt.subplots(figsize=(5, 3.5))
    lam = np.asarray(report.lam)
    ax.errorbar(lam, report.estimate, yerr=report.std_error, fmt="o", label="estimate ± s.e.")
    ax.plot(lam, report.lower, "^", label="lower bound")
    if report.exact is not None:
        ax.plot(lam, report.exact, "k-", label="exact")
    if report.claimed_epsilon is not None:
        ax.axhline(report.claimed_epsilon, color="r", ls="--", label="claimed ε")
    ax.set_xlabel("order λ")
    ax.set_ylabel("ε(λ)")
    ax.set_title(f"{report.mechanism}, n = {report.n:,}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _meta(args, **fields) -> dict:
    """The settings and environment a results file records beside its numbers."""
    import platform

    import jax

    return {
        "command": _command_line(args),
        **fields,
        "jax": jax.__version__,
        "devices": f"{len(jax.devices())} {jax.default_backend()}",
        "machine": platform.platform(),
    }


def _add_cpu_devices(parser) -> None:
    parser.add_argument(
        "--cpu-devices",
        type=_cpu_devices,
        default=None,
        metavar="K",
        help="on a CPU, split the replications over K devices, side by side (auto: one per "
        "core). JAX shows one CPU device unless told; results change only by rounding. "
        "Has no effect on a GPU or TPU, whose devices are used as they are",
    )


def _set_cpu_devices(k: int | None) -> None:
    """Give JAX ``k`` CPU devices; possible only before JAX's first computation."""
    if k is None:
        return
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", k)  # raises once JAX's backends exist
    except RuntimeError as err:
        have = len(jax.devices("cpu"))
        if have != k:
            raise CliError(
                f"--cpu-devices {k}: JAX has already started in this process with {have} CPU "
                "device(s); the count can only be set before JAX's first computation (run "
                "rdpjax in a fresh process)"
            ) from err


def _use_agg() -> bool:
    """Select matplotlib's file-only backend; False when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    return True


def _cmd_reproduce(args) -> int:
    from rdpjax.reproduce import format_table, reproduce, write_results

    if args.quick:
        n, reps, coverage_n = args.n or [10**5], args.reps or 50, args.coverage_n or 10**4
    else:
        n, reps, coverage_n = args.n or [10**7], args.reps or 200, args.coverage_n or 10**5
    out = None if args.out is None else Path(args.out)
    figures = None
    if out is not None and not args.no_figures:
        if _use_agg():
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
            reps=reps,
            coverage_n=coverage_n,
            seed=args.seed,
            alpha=args.alpha,
            names=args.experiment or None,
            progress=not args.json,
            figures=figures,
        )
    except ValueError as err:
        raise CliError(str(err)) from err
    meta = _meta(args, alpha=args.alpha, seed=args.seed)
    if figures is not None:
        meta["figures"] = sorted(str(p.relative_to(out)) for p in figures.glob("*.png"))
    if out is not None:
        write_results(rows, out, meta)
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=1))
    else:
        print(format_table(rows))
        if out is not None:
            print(f"\nwrote {out / 'results.json'} and results.md", end="")
            print(f", and {len(meta['figures'])} figures in {figures}" if figures else "")
    return 0


def _coverage_targets(args) -> list[tuple[str, object, object, object]]:
    """``(label, mechanism, x, x')`` for each mechanism or experiment the command names."""
    from rdpjax.databases import paper_pair
    from rdpjax.reproduce import EXPERIMENTS, resolve_experiment

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
    mech = _zoo_mechanism(args.mechanism, args.param)
    label = args.mechanism
    if args.param:
        label += "(" + ", ".join(args.param) + ")"
    try:
        x, x_prime = mech.reference_pair()
    except ValueError as err:
        raise CliError(str(err)) from err
    return [(label, mech, x, x_prime)]


def _cmd_coverage(args) -> int:
    from rdpjax.audit import exact_divergences
    from rdpjax.reproduce import coverage_cells
    from rdpjax.studies import format_coverage

    targets = _coverage_targets(args)
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
    meta = _meta(
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


def _cmd_demo(args) -> int:
    from rdpjax.demo import run_demo

    run_demo(n=args.n, seed=args.seed, as_json=args.json)
    return 0


def _subcommand(sub, name: str, *, help: str, description: str, examples: list[str]):
    """A subparser whose help ends with examples, kept on their own lines."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    return sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 88),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_lam(parser, *, required: bool = False, parse=float) -> None:
    parser.add_argument(
        "--lam",
        type=parse,
        nargs="+",
        required=required,
        default=None if required else [2.0, 5.0, 7.0],
        metavar="λ",
        help="one or more orders λ > 1; bounds are simultaneous over them"
        + ("" if required else " (default 2 5 7)"),
    )


def _add_zoo_options(parser, names: list[str], *, optional: bool = False) -> None:
    parser.add_argument(
        "mechanism",
        nargs="?" if optional else None,
        default=None,
        metavar="MECHANISM",
        help="a zoo mechanism: " + ", ".join(names),
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a parameter of the mechanism (repeatable), e.g. --param scale=2",
    )


def _add_experiments(parser, slugs: list[str], help: str) -> None:
    parser.add_argument(
        "--experiment",
        action="append",
        default=[],
        metavar="NAME",
        help=f"{help} (repeatable): " + ", ".join(slugs),
    )


def _add_sizes(parser, help: str) -> None:
    """``--n N [N ...]``, also repeatable: every value is kept."""
    parser.add_argument(
        "--n", type=_count, nargs="+", action="extend", default=None, metavar="N", help=help
    )


def _add_level_and_seed(parser) -> None:
    parser.add_argument(
        "--alpha", type=_alpha, default=0.05, help="family-wise error level (default 0.05)"
    )
    parser.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rdpjax",
        description="Black-box statistical lower bounds on the Rényi-DP parameter ε(λ) "
        "(Kutta, Askin, Dunsche, arXiv:2212.04739).",
        epilog="Run `rdpjax COMMAND --help` for a command's options and examples.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = _subcommand(
        sub,
        "bound",
        help="lower-bound D_λ(P‖Q) from two files of samples",
        description="Lower-bound the Rényi divergence D_λ(P‖Q), hence ε(λ), from samples of a "
        "mechanism's output on two adjacent databases: P on x, Q on x'. Files: .npy, .csv or "
        ".txt, one sample per row (several columns: a vector output, d ≤ 3 for continuous data).",
        examples=[
            "rdpjax bound on_x.npy on_x_prime.npy --lam 2 5 7 --json",
            "rdpjax bound counts_x.csv counts_x_prime.csv --lam 2 --discrete --both-directions",
        ],
    )
    b.add_argument("p", metavar="P", help="samples of the output on database x")
    b.add_argument("q", metavar="Q", help="samples of the output on the adjacent database x'")
    _add_lam(b, required=True)
    b.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="family-wise error level in (0, 0.5) (default 0.05)",
    )
    kind = b.add_mutually_exclusive_group()
    kind.add_argument(
        "--discrete",
        dest="discrete",
        action="store_const",
        const=True,
        default=None,
        help="treat outputs as discrete (relative frequencies)",
    )
    kind.add_argument(
        "--continuous",
        dest="discrete",
        action="store_const",
        const=False,
        help="treat outputs as continuous (kernel density estimates)",
    )
    b.add_argument(
        "--both-directions",
        action="store_true",
        help="also bound D_λ(Q‖P) and report the larger bound per λ",
    )
    b.add_argument(
        "--bandwidth", type=_positive_float, default=None, help="KDE bandwidth (data units)"
    )
    b.add_argument("--floor", type=_positive_float, default=None, help="softmax floor τ")
    b.add_argument(
        "--beta", type=_positive_float, default=None, help="softmax sharpness β (default 1/τ)"
    )
    b.add_argument("--grid-size", type=_count, default=None, help="KDE grid points per axis")
    b.add_argument("--json", action="store_true", help="print JSON with the Bound's field names")
    b.set_defaults(func=_cmd_bound)

    names = sorted(_mechanism_factories())
    a = _subcommand(
        sub,
        "audit",
        help="audit a zoo mechanism on its reference pair of databases",
        description="Draw n outputs of a zoo mechanism on its reference pair of adjacent "
        "databases (pair (21) of arXiv:2212.04739 for paper 000's mechanisms), bound ε(λ) from "
        "below in both directions, and compare with the exact value and the claimed ε.",
        examples=[
            "rdpjax audit laplace --n 1e5",
            "rdpjax audit orthogonal-series --param k=2 --param ties=literal --lam 2 5 7 --n 1e5",
        ],
    )
    _add_zoo_options(a, names)
    _add_lam(a, parse=_order)
    a.add_argument("--n", type=_count, default=10**6, help="outputs per database (default 1e6)")
    _add_level_and_seed(a)
    a.add_argument("--one-direction", action="store_true", help="bound only D_λ(P‖Q)")
    a.add_argument("--json", action="store_true", help="print JSON")
    a.add_argument(
        "--plot", metavar="FILE.png", default=None, help="write a plot of the bounds vs λ"
    )
    a.set_defaults(func=_cmd_audit)

    from rdpjax.reproduce import EXPERIMENTS, experiment_slug

    slugs = [experiment_slug(name) for name in EXPERIMENTS]
    c = _subcommand(
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
        "the paper's parameters): " + ", ".join(slugs) + ".",
        examples=[
            "rdpjax coverage laplace --n 1e4 --reps 200",
            "rdpjax coverage gaussian --param scale=2 --lam 2 5 7 --n 1e4 --n 1e5 --reps 100",
            "rdpjax coverage --experiment shuffled-rr --experiment noisy-gd --reps 50 --json",
            "rdpjax coverage --all --n 1e4 1e5 --reps 200",
        ],
    )
    _add_zoo_options(c, names, optional=True)
    _add_experiments(c, slugs, "a paper-000 experiment")
    c.add_argument("--all", action="store_true", help="all seven paper-000 experiments")
    _add_lam(c, parse=_order)
    _add_sizes(
        c,
        "outputs per database in each replication; several values (or repeated --n) run one "
        "study per n (default 1e4)",
    )
    c.add_argument("--reps", type=_reps, default=200, help="replications R per study (default 200)")
    _add_level_and_seed(c)
    c.add_argument(
        "--both-directions",
        action="store_true",
        help="bound both directions; the truth is then the larger divergence",
    )
    _add_cpu_devices(c)
    c.add_argument("--json", action="store_true", help="print JSON, no progress lines")
    c.set_defaults(func=_cmd_coverage)

    r = _subcommand(
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
            "rdpjax reproduce --out benchmarks/results/paper_000   # n = 1e7, R = 200",
        ],
    )
    _add_sizes(
        r,
        "outputs per database for the bounds; several values give one row per n and a "
        "bound-vs-n figure (default 1e7; --quick: 1e5)",
    )
    r.add_argument(
        "--reps",
        type=_reps,
        default=None,
        help="replications of the coverage study (default 200; --quick: 50)",
    )
    r.add_argument(
        "--coverage-n",
        type=_count,
        default=None,
        help="outputs per database in each replication (default 1e5; --quick: 1e4)",
    )
    _add_experiments(r, slugs, "run only this experiment")
    r.add_argument("--quick", action="store_true", help="small sizes: minutes on a laptop")
    r.add_argument(
        "--out", metavar="DIR", default=None, help="write results.json, results.md, figures/"
    )
    r.add_argument("--no-figures", action="store_true", help="with --out: skip the figures")
    _add_level_and_seed(r)
    _add_cpu_devices(r)
    r.add_argument("--json", action="store_true", help="print JSON, no progress lines")
    r.set_defaults(func=_cmd_reproduce)

    d = _subcommand(
        sub,
        "demo",
        help="bounds for the Gaussian and Laplace mechanisms of paper 000 beside the exact values",
        description="Draw n outputs per side of the Gaussian and Laplace mechanisms (b = 5) on "
        "the databases (21) of arXiv:2212.04739 and print the lower bounds at λ = 2, 5, 7 "
        "beside the exact ε(λ). (`make demo` runs the fuller `rdpjax reproduce --quick`.)",
        examples=["rdpjax demo", "rdpjax demo --n 1e5 --json"],
    )
    d.add_argument("--n", type=_count, default=10**6, help="samples per side (default 1e6)")
    d.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    d.add_argument("--json", action="store_true", help="print JSON instead of a table")
    d.set_defaults(func=_cmd_demo)

    from rdpjax.search_cli import add_search_command  # imports this module's helpers

    add_search_command(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        _set_cpu_devices(getattr(args, "cpu_devices", None))
        return args.func(args)
    except CliError as err:
        print(f"rdpjax {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
