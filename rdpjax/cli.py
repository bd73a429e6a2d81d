"""The ``rdpjax`` command line.

    rdpjax bound P Q --lam 2 5 7 [--alpha A] [--discrete | --continuous] [--json]
    rdpjax audit MECHANISM [--param NAME=VALUE ...] --lam 2 5 7 --n 1e6 [--json] [--plot F.png]
    rdpjax demo [--n N] [--seed S] [--json]

Errors in the input are reported on one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

__all__ = ["main", "read_samples"]


class CliError(Exception):
    """An input problem, reported as one line with exit status 2."""


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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from err
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite positive number: {text!r}")
    return value


def _count(text: str) -> int:
    value = _positive_float(text)
    if value != int(value) or value < 2:
        raise argparse.ArgumentTypeError(f"must be a whole number ≥ 2: {text!r}")
    return int(value)


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


def _cmd_audit(args) -> int:
    import jax

    from rdpjax.audit import audit

    factories = _mechanism_factories()
    factory = factories[args.mechanism]
    try:
        mech = factory(**_parse_params(args.param, factory))
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


def _cmd_reproduce(args) -> int:
    import platform

    import jax

    from rdpjax.reproduce import format_table, reproduce, write_results

    if args.quick:
        n, reps, coverage_n = args.n or 10**5, args.reps or 50, args.coverage_n or 10**4
    else:
        n, reps, coverage_n = args.n or 10**7, args.reps or 200, args.coverage_n or 10**5
    rows = reproduce(
        n=n,
        reps=reps,
        coverage_n=coverage_n,
        seed=args.seed,
        alpha=args.alpha,
        progress=not args.json,
    )
    meta = {
        "command": "rdpjax " + " ".join(sys.argv[1:]) if sys.argv[1:] else "rdpjax reproduce",
        "alpha": args.alpha,
        "seed": args.seed,
        "jax": jax.__version__,
        "machine": platform.platform(),
    }
    if args.out is not None:
        write_results(rows, Path(args.out), meta)
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=1))
    else:
        print(format_table(rows))
        if args.out is not None:
            print(f"\nwrote {Path(args.out) / 'results.json'} and results.md")
    return 0


def _cmd_demo(args) -> int:
    from rdpjax.demo import run_demo

    run_demo(n=args.n, seed=args.seed, as_json=args.json)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rdpjax",
        description="Black-box statistical lower bounds on the Rényi-DP parameter ε(λ) "
        "(Kutta, Askin, Dunsche, arXiv:2212.04739).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    b = sub.add_parser(
        "bound",
        help="lower-bound D_λ(P‖Q) from two files of samples",
        description="Lower-bound the Rényi divergence D_λ(P‖Q), hence ε(λ), from samples of a "
        "mechanism's output on two adjacent databases: P on x, Q on x'. Files: .npy, .csv or "
        ".txt, one sample per row (several columns: a vector output, d ≤ 3 for continuous data).",
        epilog="example: rdpjax bound on_x.npy on_x_prime.npy --lam 2 5 7 --json",
    )
    b.add_argument("p", metavar="P", help="samples of the output on database x")
    b.add_argument("q", metavar="Q", help="samples of the output on the adjacent database x'")
    b.add_argument(
        "--lam",
        type=float,
        nargs="+",
        required=True,
        metavar="λ",
        help="one or more orders λ > 1 (bounds are simultaneous)",
    )
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
    a = sub.add_parser(
        "audit",
        help="audit a zoo mechanism on its reference pair of databases",
        description="Draw n outputs of a zoo mechanism on its reference pair of adjacent "
        "databases (pair (21) of arXiv:2212.04739 for paper 000's mechanisms), bound ε(λ) from "
        "below in both directions, and compare with the exact value and the claimed ε. "
        f"Mechanisms: {', '.join(names)}.",
        epilog="example: rdpjax audit orthogonal-series --param k=2 --param ties=literal "
        "--lam 2 5 7 --n 1e5",
    )
    a.add_argument(
        "mechanism", choices=names, metavar="MECHANISM", help="one of: " + ", ".join(names)
    )
    a.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a parameter (repeatable), e.g. --param scale=2",
    )
    a.add_argument(
        "--lam",
        type=float,
        nargs="+",
        default=[2.0, 5.0, 7.0],
        metavar="λ",
        help="orders λ > 1 (default 2 5 7)",
    )
    a.add_argument("--n", type=_count, default=10**6, help="outputs per database (default 1e6)")
    a.add_argument(
        "--alpha", type=float, default=0.05, help="family-wise error level (default 0.05)"
    )
    a.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    a.add_argument("--one-direction", action="store_true", help="bound only D_λ(P‖Q)")
    a.add_argument("--json", action="store_true", help="print JSON")
    a.add_argument(
        "--plot", metavar="FILE.png", default=None, help="write a plot of the bounds vs λ"
    )
    a.set_defaults(func=_cmd_audit)

    r = sub.add_parser(
        "reproduce",
        help="the seven experiments of paper 000 §V at λ = 2, 5, 7, with coverage",
        description="Audit the seven mechanisms of paper 000 §V (Laplace, Gaussian, both "
        "Poisson-subsampled, randomized response, shuffled RR, noisy gradient descent) on pair "
        "(21) at λ = 2, 5, 7, and measure the coverage of the bound over vmapped replications. "
        "Prints a table; --out also writes results.json and results.md.",
    )
    r.add_argument(
        "--n",
        type=_count,
        default=None,
        help="outputs per database for the bounds (default 1e7; --quick: 1e5)",
    )
    r.add_argument(
        "--reps",
        type=_count,
        default=None,
        help="replications of the coverage study (default 200; --quick: 50)",
    )
    r.add_argument(
        "--coverage-n",
        type=_count,
        default=None,
        help="outputs per database in each replication (default 1e5; --quick: 1e4)",
    )
    r.add_argument("--quick", action="store_true", help="small sizes: minutes on a laptop")
    r.add_argument("--out", metavar="DIR", default=None, help="write results.json and results.md")
    r.add_argument("--alpha", type=float, default=0.05, help="family-wise error level")
    r.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    r.add_argument("--json", action="store_true", help="print JSON, no progress lines")
    r.set_defaults(func=_cmd_reproduce)

    d = sub.add_parser(
        "demo",
        help="bounds for the Gaussian and Laplace mechanisms of paper 000 beside the exact values",
        description="Draw n outputs per side of the Gaussian and Laplace mechanisms (b = 5) on "
        "the databases (21) of arXiv:2212.04739 and print the lower bounds at λ = 2, 5, 7 "
        "beside the exact ε(λ).",
    )
    d.add_argument("--n", type=_count, default=10**6, help="samples per side (default 1e6)")
    d.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")
    d.add_argument("--json", action="store_true", help="print JSON instead of a table")
    d.set_defaults(func=_cmd_demo)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CliError as err:
        print(f"rdpjax {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
