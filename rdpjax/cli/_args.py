"""Argument types, shared options and helpers of every ``rdpjax`` subcommand.

A mistake in the input is a :class:`CliError`: :func:`rdpjax.cli.main` prints it as one line on
stderr and exits with status 2. Argument types raise ``argparse.ArgumentTypeError``, which the
parser reports the same way (:class:`Parser`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import textwrap
from pathlib import Path

import numpy as np

__all__ = [
    "CliError",
    "Parser",
    "add_claim_options",
    "add_cpu_devices",
    "add_experiments",
    "add_lam",
    "add_level_and_seed",
    "add_sizes",
    "add_zoo_options",
    "alpha_level",
    "claim_from_args",
    "command_line",
    "count",
    "cpu_devices",
    "output_dir",
    "output_file",
    "order",
    "positive_float",
    "read_database",
    "reps",
    "run_meta",
    "set_cpu_devices",
    "settings",
    "subcommand",
    "use_agg",
    "whole",
    "zoo_mechanism",
]


class CliError(Exception):
    """An input problem, reported as one line with exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


# --------------------------------------------------------------------------------------------
# Argument types.


def _number(text: str, valid, requirement: str) -> float:
    """``float(text)`` if it is finite and ``valid``; else an argparse error naming the rule."""
    try:
        value = float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from err
    if not math.isfinite(value) or not valid(value):
        raise argparse.ArgumentTypeError(f"{requirement}: {text!r}")
    return value


def finite_float(text: str) -> float:
    """A finite number."""
    return _number(text, lambda v: True, "must be a finite number")


def positive_float(text: str) -> float:
    """A finite number > 0."""
    return _number(text, lambda v: v > 0, "must be a finite positive number")


def whole(text: str, least: int) -> int:
    """A whole number ≥ ``least`` (``1e6`` is accepted, ``2.5`` is not)."""
    rule = f"must be a whole number ≥ {least}"
    return int(_number(text, lambda v: v == int(v) and v >= least, rule))


def count(text: str) -> int:
    """A sample size: a whole number ≥ 2 (``1e6`` is accepted)."""
    return whole(text, 2)


def reps(text: str) -> int:
    """A number of replications: a whole number ≥ 1."""
    return whole(text, 1)


def cpu_devices(text: str) -> int:
    """``auto`` (one per core this process may run on) or a whole number ≥ 1."""
    if text.strip().lower() != "auto":
        return whole(text, 1)
    from rdpjax.sharding import cpu_cores  # imports jax, but starts no backend

    return cpu_cores()


def order(text: str) -> float:
    """An order λ: a finite number > 1."""
    return _number(text, lambda v: v > 1, "an order λ must be finite and > 1")


def alpha_level(text: str) -> float:
    """A family-wise error level in (0, 0.5)."""
    return _number(text, lambda v: 0 < v < 0.5, "must be in (0, 0.5)")


def rdp_table(text: str) -> dict[float, float]:
    """``2=0.1,5=0.4`` → ``{2.0: 0.1, 5.0: 0.4}``: claimed ε(λ) at orders λ > 1."""
    table: dict[float, float] = {}
    usage = "expects ORDER=EPSILON[,ORDER=EPSILON...], e.g. 2=0.1,5=0.4"
    for item in text.split(","):
        lam_text, sep, eps_text = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{usage}; got {text!r}")
        lam = order(lam_text)
        if lam in table:
            raise argparse.ArgumentTypeError(f"order {lam:g} given twice in {text!r}")
        table[lam] = _number(eps_text, lambda v: v >= 0, f"ε({lam:g}) must be a number ≥ 0")
    return table


# --------------------------------------------------------------------------------------------
# Shared options.


def subcommand(sub, name: str, *, help: str, description: str, examples: list[str], notes=""):
    """A subparser whose help ends with examples (and ``notes``), kept on their own lines."""
    epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
    if notes:
        epilog += "\n\n" + notes
    return sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 88),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def zoo_listing() -> str:
    """The zoo's names with their parameters and defaults, for the end of a command's help."""
    from rdpjax.mechanisms import registry

    def shown(param) -> str:
        if param.kind == "choice":
            return f"{param.name}={param.default} ({'|'.join(param.choices)})"
        return f"{param.name}={param.default:g}"

    lines = ["zoo mechanisms and their parameters (--param NAME=VALUE; default: the paper's):"]
    for name in registry.names():
        params = ", ".join(shown(p) for p in registry.get(name).params)
        lines.append(f"  {name:<29} {params}")
    return "\n".join(lines)


def add_lam(parser, *, required: bool = False, parse=float, default=(2.0, 5.0, 7.0), note=None):
    """``--lam λ [λ ...]``; ``default=None`` leaves the choice to the library (``note``: how)."""
    if required:
        tail = ""
    elif default is None:
        tail = f" (default: {note})" if note else ""
    else:
        tail = " (default " + " ".join(f"{v:g}" for v in default) + ")"
    parser.add_argument(
        "--lam",
        type=parse,
        nargs="+",
        required=required,
        default=None if required or default is None else list(default),
        metavar="λ",
        help="one or more orders λ > 1; bounds are simultaneous over them" + tail,
    )


def add_zoo_options(parser, names: list[str], *, optional: bool = False, help=None) -> None:
    """The ``MECHANISM`` positional and ``--param NAME=VALUE``."""
    parser.add_argument(
        "mechanism",
        nargs="?" if optional else None,
        default=None,
        metavar="MECHANISM",
        help=help or "a zoo mechanism: " + ", ".join(names),
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a parameter of the zoo mechanism (repeatable), e.g. --param scale=2; "
        "the parameters are listed below",
    )


def add_experiments(parser, slugs: list[str], help: str) -> None:
    parser.add_argument(
        "--experiment",
        action="append",
        default=[],
        metavar="NAME",
        help=f"{help} (repeatable): " + ", ".join(slugs),
    )


def add_sizes(parser, help: str) -> None:
    """``--n N [N ...]``, also repeatable: every value is kept."""
    parser.add_argument(
        "--n", type=count, nargs="+", action="extend", default=None, metavar="N", help=help
    )


def add_level_and_seed(parser) -> None:
    parser.add_argument(
        "--alpha", type=alpha_level, default=0.05, help="family-wise error level (default 0.05)"
    )
    parser.add_argument("--seed", type=int, default=0, help="PRNG seed (default 0)")


def add_cpu_devices(parser) -> None:
    parser.add_argument(
        "--cpu-devices",
        type=cpu_devices,
        default=None,
        metavar="K",
        help="on a CPU, split the replications over K devices, side by side (auto: one per "
        "core). JAX shows one CPU device unless told; results change only by rounding. "
        "Has no effect on a GPU or TPU, whose devices are used as they are",
    )


def add_claim_options(parser) -> None:
    """``--claim-epsilon | --claim-zcdp | --claim-gdp | --claim-rdp`` (mutually exclusive)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--claim-epsilon",
        type=finite_float,
        metavar="E",
        help="check the claim that the mechanism is ε-DP with ε = E (rdpjax.claims.pure_dp)",
    )
    group.add_argument(
        "--claim-zcdp",
        type=finite_float,
        metavar="RHO",
        help="check the claim ρ-zCDP: ε(λ) ≤ ρλ (rdpjax.claims.zcdp)",
    )
    group.add_argument(
        "--claim-gdp",
        type=finite_float,
        metavar="MU",
        help="check the claim μ-GDP: ε(λ) ≤ λμ²/2 (rdpjax.claims.gdp)",
    )
    group.add_argument(
        "--claim-rdp",
        type=rdp_table,
        metavar="λ=ε,...",
        help="check claimed RDP values, e.g. 2=0.1,5=0.4 (rdpjax.claims.rdp)",
    )


_CLAIM_OPTIONS = {
    "claim_epsilon": ("--claim-epsilon", "pure_dp"),
    "claim_zcdp": ("--claim-zcdp", "zcdp"),
    "claim_gdp": ("--claim-gdp", "gdp"),
    "claim_rdp": ("--claim-rdp", "rdp"),
}


def claim_from_args(args):
    """The :class:`rdpjax.claims.Claim` the options name, or ``None`` (CliError if invalid)."""
    for dest, (flag, constructor) in _CLAIM_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        from rdpjax import claims

        try:
            return getattr(claims, constructor)(value)
        except ValueError as err:
            shown = f"{value:g}" if isinstance(value, float) else value
            if dest == "claim_rdp":
                shown = ",".join(f"{k:g}={v:g}" for k, v in value.items())
            raise CliError(f"{flag} {shown}: {err}") from err
    return None


# --------------------------------------------------------------------------------------------
# Inputs and outputs.


def read_database(text: str, option: str) -> np.ndarray:
    """A database from the command line: a JSON list (``'[1, 0]'``) or a ``.npy`` file.

    Raises:
      CliError: naming ``option``, for a missing or unreadable file, bad JSON, or entries that
        are not finite numbers.
    """
    stripped = text.strip()
    if stripped.lower().endswith(".npy"):
        path = Path(stripped)
        if not path.is_file():
            raise CliError(f"{option} {text}: no such file")
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise CliError(f"{option} {text}: could not read it ({err})") from err
    else:
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as err:
            raise CliError(
                f"{option} {text!r}: expected a JSON list such as '[1, 0]' or a .npy file "
                f"({err.msg} at character {err.pos + 1})"
            ) from err
        try:
            arr = np.asarray(value)
        except ValueError as err:  # ragged nested lists
            raise CliError(f"{option} {text!r}: the rows have different lengths") from err
    if arr.dtype.kind not in "biuf":
        raise CliError(f"{option} {text!r}: entries must be numbers; got {arr.dtype} entries")
    if arr.size == 0:
        raise CliError(f"{option} {text!r}: the database is empty")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise CliError(f"{option} {text!r}: entries must be finite")
    return arr


def output_file(text: str, option: str, *, suffixes=None) -> Path:
    """The path of a file to write, its folder created now, before any long computation.

    Raises:
      CliError: if the path is a folder, its suffix is not one of ``suffixes``, or its folder
        cannot be created or written.
    """
    path = Path(text)
    if path.is_dir():
        raise CliError(f"{option} {text}: is a folder; name a file in it")
    if suffixes is not None and path.suffix.lower().lstrip(".") not in suffixes:
        shown = ", ".join(f".{s}" for s in sorted(suffixes))
        raise CliError(f"{option} {text}: unsupported file type {path.suffix!r} (use {shown})")
    _make_folder(path.parent, option, text)
    return path


def output_dir(text: str, option: str) -> Path:
    """A folder to write into, created now with its parents (CliError if that fails)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise CliError(f"{option} {text}: exists and is not a folder")
    _make_folder(path, option, text)
    return path


def _make_folder(folder: Path, option: str, text: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as err:
        raise CliError(
            f"{option} {text}: {err.filename or folder} is a file, not a folder"
        ) from err
    except OSError as err:
        reason = err.strerror or str(err)
        raise CliError(f"{option} {text}: cannot create the folder {folder} ({reason})") from err
    if not os.access(folder, os.W_OK):
        raise CliError(f"{option} {text}: the folder {folder} is not writable")


def use_agg() -> bool:
    """Select matplotlib's file-only backend; False when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    return True


def plot_suffixes() -> set[str]:
    """The file types matplotlib can write (``png``, ``pdf``, ``svg``, …)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return set(FigureCanvasBase.get_supported_filetypes())


# --------------------------------------------------------------------------------------------
# Mechanisms, devices and records.


def zoo_mechanism(name: str, param_items: list[str]):
    """The zoo mechanism ``name`` with ``--param NAME=VALUE`` overrides (CliError if bad)."""
    from rdpjax.mechanisms import registry

    try:
        entry = registry.get(name)
        return entry.make(**entry.parse(param_items))
    except ValueError as err:
        raise CliError(str(err)) from err


def set_cpu_devices(k: int | None) -> None:
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


def command_line(args) -> str:
    """The command as typed (for the records that results files keep)."""
    return shlex.join(["rdpjax", *args.argv])


_NOT_SETTINGS = ("func", "argv", "command")


def settings(args) -> dict:
    """Every option of the command as parsed (JSON-ready), keyed by its ``dest``."""
    from rdpjax.report import json_ready

    return {k: json_ready(v) for k, v in vars(args).items() if k not in _NOT_SETTINGS}


def run_meta(args, **fields) -> dict:
    """The settings and environment a results file records beside its numbers: the command,
    ``fields``, rdpjax's and jax's versions, the devices and the machine."""
    import platform

    import jax

    import rdpjax

    return {
        "command": command_line(args),
        **fields,
        "rdpjax": rdpjax.__version__,
        "jax": jax.__version__,
        "devices": f"{len(jax.devices())} {jax.default_backend()}",
        "machine": platform.platform(),
    }
