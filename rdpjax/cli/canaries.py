"""``rdpjax canaries SCORES``: one-run lower bounds from canary scores and inclusion bits.

    rdpjax canaries scores.csv [--claim-epsilon E [--claim-delta D] | --claim-gdp MU |
                    --claim-zcdp RHO | --claim-rdp 2=0.1,... | --claim-dpsgd σ,q,T]
                    [--delta D] [--alpha A] [--json] [--report DIR]

SCORES is a ``.csv``/``.txt`` file of two columns ``score,bit`` (an optional header line; ``#``
comments) or a ``.npy`` array of shape (m, 2); bit 1 means the canary was included (each with
probability ½, drawn before the run). ``--claim-dpsgd σ,q,T`` claims what DP-SGD's accountant
says of T steps of the Poisson-subsampled Gaussian (noise multiplier σ, sampling rate q), checked
through the trade-off curve of dp_accounting's PLD as ``one_run_bits`` checks
``from_dp_accounting(event)`` (:func:`rdpjax.cli._args.dpsgd_claim`). Prints
:meth:`rdpjax.canaries.OneRunResult.verdict` and then the AUROC and the TPR at FPR 0.001,
0.01, 0.1 with their intervals (:mod:`rdpjax.canaries.metrics`), or all of it as JSON.
``--report DIR`` writes ``report.md``, ``report.json`` and the trade-off figure
``tradeoff.png`` (:mod:`rdpjax.canaries.report`).
Exit status: 0, or 1 when the claim is refuted, 2 on an input error (one line on stderr: a
missing or unreadable file, a wrong shape, scores that are not finite, bits that are not 0/1, a
side with no canary, a report folder that cannot be made).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from rdpjax.cli._args import add_claim_options, claim_from_args, subcommand
from rdpjax.cli._files import output_dir
from rdpjax.cli._types import CliError, alpha_level, finite_float, seed

__all__ = ["CLI_FPRS", "add_command", "read_scores", "run"]

CLI_FPRS = (0.001, 0.01, 0.1)
"""Target FPRs at which the command prints the TPR (each line valid on its own at 1 − α)."""


def read_scores(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, bits)`` from a two-column file (see the module docstring).

    Raises:
        ValueError: for a missing file, another extension, text that does not parse, or an array
            that is not (m, 2).
    """
    from rdpjax.cli.bound import read_samples

    path = Path(path)
    if path.suffix.lower() in (".csv", ".txt") and path.is_file():
        try:
            lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: could not read scores ({err})") from err
        body = [ln for ln in lines if not ln.lstrip().startswith("#")]
        delimiter = "," if "," in "".join(body[:1]) else None
        if body and _is_header(body[0], delimiter):
            body = body[1:]  # a header line such as "score,bit"
        if not body:  # only a header (numpy would warn, then return an empty array)
            raise ValueError(f"{path}: no scores, only a header (expected lines score,bit)")
        try:
            arr = np.loadtxt(body, delimiter=delimiter, ndmin=2)
        except ValueError as err:
            raise ValueError(f"{path}: could not read scores ({err})") from err
    else:
        arr = read_samples(path)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(
            f"{path}: expected two columns score,bit; got an array of shape {arr.shape}"
        )
    return arr[:, 0], arr[:, 1]


def _is_header(line: str, delimiter: str | None) -> bool:
    """Whether the first line is a header: a field with letters that is not a number.

    A row of numbers in exponent form (``numpy.savetxt``'s ``1.0e+00``) is data, not a header,
    and so is a malformed row of digits (``1.0;1``), which the reader then names.
    """
    for field in line.split(delimiter):
        try:
            float(field)
        except ValueError:
            if any(ch.isalpha() for ch in field):
                return True
    return False


def run(args) -> int:
    """Handler of ``rdpjax canaries``; input errors raise :class:`CliError`."""
    import jax

    from rdpjax.canaries import one_run_bits
    from rdpjax.canaries.report import summary, write_report

    claim = claim_from_args(args)
    if args.report is not None:  # a folder that cannot be made fails before the work
        output_dir(args.report, "--report")
    try:
        scores, bits = read_scores(args.scores)
        key = jax.random.key(args.seed)  # the order of tied scores (canaries.guesses.tie_order)
        result = one_run_bits(scores, bits, claim, delta=args.delta, alpha=args.alpha, key=key)
    except ValueError as err:
        raise CliError(str(err)) from err
    ins, outs = scores[bits == 1], scores[bits == 0]
    metrics = summary(ins, outs, alpha=args.alpha, fprs=CLI_FPRS)  # together at 1 − α
    area, points = metrics["auroc"], metrics["points"]
    if args.json:
        extra = {"verdict": result.verdict(), "auroc": vars(area)}
        extra["points"] = [vars(p) | {"threshold": _finite(p.threshold)} for p in points]
        print(json.dumps(result.to_dict() | extra, indent=1))
    else:
        print(result.verdict())
        print(
            f"metrics (AUROC and {len(points)} operating points), together at "
            f"{100 * (1 - args.alpha):g}%:"
        )
        print(area.describe())
        for point in points:
            print(point.describe())
    if args.report is not None:
        try:
            paths = write_report(args.report, scores, bits, result, meta={"command": _command()})
        except ValueError as err:
            raise CliError(str(err)) from err
        print(f"wrote {', '.join(str(p) for p in paths)}", file=sys.stderr)
    return 1 if result.refuted else 0


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _command() -> str:
    return " ".join(["rdpjax", *sys.argv[1:]])


def add_command(sub) -> None:
    """Register ``rdpjax canaries``."""
    parser = subcommand(
        sub,
        "canaries",
        help="one-run audit: ε and μ lower bounds from canary scores and inclusion bits",
        description="Lower bounds on ε(δ) for any (ε, δ)-DP mechanism and on μ (GDP) from one "
        "run's canary scores with their inclusion bits (Steinke, Nasr, Jagielski "
        "arXiv:2305.08846; Mahloujifar, Melis, Chaudhuri arXiv:2410.22235), and a check of a "
        "claim. Exit status 1 when the claim is refuted.",
        examples=[
            "rdpjax canaries scores.csv --claim-epsilon 4 --claim-delta 1e-5",
            "rdpjax canaries scores.npy --claim-gdp 1.0 --json",
            "rdpjax canaries scores.csv --claim-dpsgd 1.1,0.01,1000",
        ],
    )
    parser.add_argument("scores", help="score,bit per line (.csv/.txt) or an (m, 2) .npy array")
    add_claim_options(parser, dpsgd="checked through the trade-off curve of its PLD")
    parser.add_argument(
        "--delta",
        type=finite_float,
        default=None,
        metavar="D",
        help="δ of the ε bounds (default: the claim's δ for --claim-epsilon, else 1e-5)",
    )
    parser.add_argument(
        "--alpha", type=alpha_level, default=0.05, help="error probability of each bound"
    )
    parser.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="PRNG seed of the order of tied scores (drawn independently of the bits; no part "
        "without ties; default 0)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="DIR",
        help="write report.md, report.json and the trade-off figure tradeoff.png to DIR",
    )
    parser.set_defaults(func=run)
