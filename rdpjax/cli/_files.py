"""Files and records of the ``rdpjax`` subcommands.

The databases read from the command line, the files and folders written (created before any long
computation), and the records of the command and its settings that results files keep.
Re-exported by :mod:`rdpjax.cli._args`.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import numpy as np

from rdpjax.cli._types import CliError

__all__ = [
    "command_line",
    "output_dir",
    "output_file",
    "plot_suffixes",
    "read_database",
    "run_meta",
    "settings",
    "use_agg",
]


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
# Records.


def command_line(args) -> str:
    """The command as typed (for the records that results files keep)."""
    return shlex.join(["rdpjax", *args.argv])


_NOT_SETTINGS = ("func", "argv", "command")


def settings(args) -> dict:
    """Every option of the command as parsed (JSON-ready), keyed by its ``dest``."""
    from rdpjax.auditing.report import json_ready

    return {k: json_ready(v) for k, v in vars(args).items() if k not in _NOT_SETTINGS}


def run_meta(args, **fields) -> dict:
    """The settings and environment a results file records beside its numbers.

    That is the command, ``fields``, rdpjax's and jax's versions, the devices and the machine.
    """
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
