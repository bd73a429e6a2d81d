"""``rdpjax bound P Q``: lower-bound D_λ(P‖Q) from two files of samples, and check a claim.

    rdpjax bound P Q [--lam 2 5 7] [--alpha A] [--discrete | --continuous] [--both-directions]
                 [--claim-epsilon E | --claim-zcdp RHO | --claim-gdp MU | --claim-rdp 2=0.1,...]
                 [--bandwidth H] [--floor TAU] [--beta B] [--grid-size G]
                 [--transform auto|none|quantile] [--json] [--report DIR]

With a claim the table has a ``claimed`` column beside the bounds. ``--report DIR`` writes the
same report files as ``rdpjax audit --report`` (report.json, report.md, bounds.png), so that a
bound on samples drawn elsewhere (another environment, another machine) is recorded the same
way. Exit status: 0, or 1 when the claim is refuted, 2 on an input error.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rdpjax.cli._args import add_claim_options, add_lam, claim_from_args, subcommand
from rdpjax.cli._files import output_dir, run_meta, settings
from rdpjax.cli._types import CliError, count, positive_float, seed

__all__ = ["add_command", "read_samples", "run"]


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
            if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in text.splitlines()):
                raise ValueError(f"{path}: no samples (the file is empty or only comments)")
            arr = np.loadtxt(path, delimiter=delimiter, ndmin=1, comments="#")
        else:
            raise ValueError(f"{path}: unsupported file type {suffix!r} (use .npy, .csv or .txt)")
    except ValueError as err:
        if str(err).startswith(str(path)):
            raise
        raise ValueError(f"{path}: could not read samples ({err})") from err
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: could not read samples ({err})") from err
    if arr.ndim == 0:
        raise ValueError(f"{path}: one number, not samples (one sample a row)")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    return arr


def run(args) -> int:
    """Handler of ``rdpjax bound``; input errors raise :class:`CliError`."""
    import rdpjax
    from rdpjax.claims.orders import default_orders

    claim = claim_from_args(args)
    folder = None if args.report is None else output_dir(args.report, "--report")  # first
    try:
        p = read_samples(args.p)
        q = read_samples(args.q)
        n = min(len(p), len(q))  # the claim grid is cut below SMALL_N outputs per side
        lam = args.lam if args.lam is not None else default_orders(claim, n).tolist()
        # The claim grid's error rates were measured with both directions (docs/claims.md).
        both = args.both_directions or (claim is not None and args.lam is None)
        # ε-DP, (ε, δ) and GDP claims: rejection sets too, each family at α/2 (as rdpjax audit).
        use_sets = claim is not None and claim.kind in ("pure_dp", "approx_dp", "gdp")
        sets = None
        import jax

        key = jax.random.key(args.seed)
        if use_sets:
            from rdpjax.rejection import set_test

            sets = set_test(key, p, q, claim, alpha=args.alpha / 2)
        bound = rdpjax.lower_bound(
            p,
            q,
            lam,
            key=key,  # the rows in the key's order: a file may hold its samples sorted
            alpha=args.alpha / 2 if use_sets else args.alpha,
            discrete=args.discrete,
            bandwidth=args.bandwidth,
            floor=args.floor,
            beta=args.beta,
            grid_size=args.grid_size,
            both_directions=both,
            transform=None if args.transform == "none" else args.transform,
        )
        check = None
        if claim is not None:
            from rdpjax.claims import check_claim

            check = check_claim(claim, bound.lam, bound.lower, float(bound.alpha))
    except ValueError as err:
        raise CliError(str(err)) from err
    report = _report(args, bound, claim, n, sets)
    if args.json:
        out = bound.to_dict()
        if check is not None:
            out["claim"] = claim.to_dict()
            out["claimed"] = check.to_dict()["claimed"]
            out["refuted"] = report.refuted
            out["refuted_at"] = [bool(r) for r in check.refuted_at]
            out["is_refuted"] = report.is_refuted
            out["verdict"] = report.verdict()
            out["sets"] = None if sets is None else sets.to_dict()
        print(json.dumps(out, indent=1))
    elif check is None:
        print(f"Rényi-DP lower bounds from {args.p} (P) and {args.q} (Q)")
        print(bound)
    else:  # the bounds beside the claim, and the verdict last
        print(report)
    if folder is not None:
        from rdpjax.auditing.writer import write_report

        try:
            paths = write_report(report, folder, meta=run_meta(args, **settings(args)))
        except (OSError, ValueError) as err:
            raise CliError(f"--report {args.report}: {err}") from err
        if not args.json:
            print("wrote " + ", ".join(str(p) for p in paths))
    return 1 if report.is_refuted else 0


def _report(args, bound, claim, n: int, sets=None):
    """An :class:`rdpjax.AuditReport` of a bound on two files of samples (no exact value)."""
    from rdpjax.auditing.report import AuditReport

    record = {
        "lam": [float(v) for v in np.asarray(bound.lam)],
        "lam_chosen_by": "user" if args.lam is not None else "rdpjax.claims.orders.default_orders",
        "alpha": float(args.alpha),
        "test": "renyi" if sets is None else "both",
        "both_directions": bool(bound.both_directions),
        "samples": {"p": str(args.p), "q": str(args.q)},
        "transform_applied": bound.transform,
    }
    return AuditReport.from_bound(
        bound,
        claim=claim,
        mechanism=f"samples {args.p} (P) and {args.q} (Q)",
        n=n,
        settings=record,
        sets=sets,
    )


def add_command(sub):
    """Add ``rdpjax bound`` to ``sub`` (from ``add_subparsers``)."""
    b = subcommand(
        sub,
        "bound",
        help="lower-bound D_λ(P‖Q) from two files of samples",
        description="Lower-bound the Rényi divergence D_λ(P‖Q), hence ε(λ), from samples of a "
        "mechanism's output on two adjacent databases: P on x, Q on x'. Files: .npy, .csv or "
        ".txt, one sample per row (several columns: a vector output, d ≤ 3 for continuous data). "
        "With a claim (--claim-epsilon [--claim-delta], --claim-zcdp, --claim-gdp or --claim-rdp) "
        "the bounds are checked against it ((ε, δ) and GDP claims also by certified rejection "
        "sets); the exit status is 1 when they refute it, 0 otherwise, 2 on an "
        "input error.",
        examples=[
            "rdpjax bound on_x.npy on_x_prime.npy --lam 2 5 7 --json",
            "rdpjax bound counts_x.csv counts_x_prime.csv --lam 2 --discrete --both-directions",
            "rdpjax bound on_x.npy on_x_prime.npy --both-directions --claim-zcdp 0.02",
        ],
    )
    b.add_argument("p", metavar="P", help="samples of the output on database x")
    b.add_argument("q", metavar="Q", help="samples of the output on the adjacent database x'")
    add_lam(
        b,
        default=None,
        note="2 5 7, or with a claim the wide grid 1.5 … 30 of rdpjax.claims.orders.CLAIM_ORDERS",
    )
    b.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="family-wise error level in (0, 0.5) (default 0.05)",
    )
    b.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="PRNG seed of the order the rows are read in (a file may hold its samples sorted: "
        "they are sorted, then permuted by it) and of the rejection sets' split (default 0)",
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
        help="also bound D_λ(Q‖P) and report the larger bound per λ (always on with a claim and "
        "no --lam: the claim grid was validated that way)",
    )
    add_claim_options(b)
    b.add_argument(
        "--bandwidth",
        type=positive_float,
        default=None,
        help="KDE bandwidth (data units; default: the calibrated rule). Far below the rule's "
        "the bound is not valid: it can land above the truth",
    )
    b.add_argument("--floor", type=positive_float, default=None, help="softmax floor τ")
    b.add_argument(
        "--beta", type=positive_float, default=None, help="softmax sharpness β (default 1/τ)"
    )
    b.add_argument("--grid-size", type=count, default=None, help="KDE grid points per axis")
    b.add_argument(
        "--transform",
        choices=["auto", "none", "quantile"],
        default="auto",
        help="continuous outputs: 'quantile' maps them by a quantile map fitted on a pilot split "
        "(every 16th row, set aside) before the KDE, tighter for multimodal, spiky or "
        "heavy-tailed outputs; 'none' keeps them; 'auto' (default) maps outputs of up to 3 axes "
        "when the pilot has, along one axis, Gaussian tails (up to 2^21 draws a side), tails as "
        "heavy as a Laplace law's, or two separated modes",
    )
    b.add_argument(
        "--json",
        action="store_true",
        help="print JSON with the Bound's field names (and claim, refuted, verdict with a claim)",
    )
    b.add_argument(
        "--report",
        metavar="DIR",
        default=None,
        help="write report.json, report.md and bounds.png to DIR (as rdpjax audit --report)",
    )
    b.set_defaults(func=run)
    return b
