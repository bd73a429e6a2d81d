"""Loading the user's own code for ``rdpjax audit FILE.py:FUNCTION`` and ``--project``.

A reference is ``FILE.py:FUNCTION`` (a file imported by path) or ``package.module:function``
(imported by name, the current folder first on the path, as ``python -m`` does); ``FUNCTION`` may
be dotted (``Class.method``). A reference that cannot be resolved — no such file or module, no
such attribute, not callable — is a :class:`~rdpjax.cli._types.CliError` (one line, exit status 2).

An exception raised *by the user's code*, while its module is imported or when rdpjax calls the
function, becomes a :class:`UserCodeError` holding the original exception. The function is wrapped
by :func:`guard`, a plain Python function calling the user's, so it stays jittable: under
``jax.jit`` the exception is raised at trace time and passes through JAX unchanged in type.
:func:`format_user_error` prints the user's traceback, its frames from rdpjax, JAX and the
standard library left out, then one line naming the reference.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import re
import sys
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path

from rdpjax.cli._types import CliError

__all__ = [
    "UserCodeError",
    "check_file",
    "format_user_error",
    "guard",
    "is_reference",
    "load_function",
]


class UserCodeError(Exception):
    """An exception raised inside the user's code.

    Attributes:
      reference: the reference as the user typed it (``mech.py:noisy_sum``).
      original: the exception the user's code raised (its traceback intact).
      files: the user's source files, whose frames the printed traceback keeps.
      hint: an extra sentence for the final line, or ``""``.
    """

    def __init__(self, reference: str, original: BaseException, files=(), hint: str = ""):
        super().__init__(f"{type(original).__name__}: {original}")
        self.reference = reference
        self.original = original
        self.files = frozenset(files)
        self.hint = hint


def is_reference(text: str) -> bool:
    """Whether ``text`` names user code (it has a colon) rather than a zoo mechanism."""
    return ":" in text


def guard(fn: Callable, reference: str, files=(), hint: str = "") -> Callable:
    """``fn`` with every exception it raises re-raised as a :class:`UserCodeError`.

    ``hint`` goes with an ``AttributeError`` or a ``TypeError`` (JAX's tracer errors are
    ``TypeError`` subclasses): the usual sign of a function called with the wrong kind of arguments.
    """

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UserCodeError:
            raise
        except Exception as err:
            shown = hint if isinstance(err, AttributeError | TypeError) else ""
            raise UserCodeError(reference, err, files, shown) from err

    return guarded


# --------------------------------------------------------------------------------------------
# Importing.


@contextlib.contextmanager
def _on_path(folder: str):
    """``folder`` first on ``sys.path`` for the duration (only if it was not there)."""
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(folder)


def _module_name(path: Path) -> str:
    """A module name derived from the file name that no imported module already uses."""
    base = re.sub(r"\W", "_", path.stem) or "module"
    if base[0].isdigit():
        base = "_" + base
    name, i = base, 1
    while name in sys.modules:
        existing = getattr(sys.modules[name], "__file__", None)
        if existing and os.path.realpath(existing) == os.path.realpath(path):
            break  # the same file: import it again under its own name
        i += 1
        name = f"{base}_{i}"
    return name


def _import_file(path: Path, reference: str, cache: dict):
    """Execute ``path`` as a module (its folder on ``sys.path`` during the import only)."""
    key = os.path.realpath(path)
    if key in cache:
        return cache[key]
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"{reference}: cannot import {path} (not a Python file?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with _on_path(str(path.resolve().parent)):
            spec.loader.exec_module(module)
    except Exception as err:
        sys.modules.pop(name, None)
        raise UserCodeError(reference, err, {key}) from err
    cache[key] = module
    return module


def _import_dotted(target: str, reference: str):
    """``importlib.import_module(target)`` with the current folder first on the path."""
    try:
        with _on_path(os.getcwd()):
            return importlib.import_module(target)
    except ModuleNotFoundError as err:
        missing = err.name or ""
        if missing and (target == missing or target.startswith(missing + ".")):
            raise CliError(
                f"{reference}: no module named {missing!r} (name a file as FILE.py:FUNCTION, or "
                "a module importable from the current folder)"
            ) from err
        raise UserCodeError(reference, err, _module_files(target, err)) from err
    except Exception as err:
        raise UserCodeError(reference, err, _module_files(target, err)) from err


def _module_files(target: str, err: BaseException) -> set[str]:
    """The files of the frames of ``err`` that belong to ``target``'s package (installed or not)."""
    top = target.split(".")[0]
    files = set()
    for frame in traceback.extract_tb(err.__traceback__):
        parts = Path(frame.filename).parts
        if top in parts or Path(frame.filename).stem == top:
            files.add(os.path.realpath(frame.filename))
    return files


def check_file(target: str) -> Path:
    """``target`` as a path, if it names a readable file (else a :class:`CliError`)."""
    path = Path(target)
    if not path.exists():
        raise CliError(f"{target}: no such file")
    if not path.is_file():
        raise CliError(f"{target}: not a file")
    if not os.access(path, os.R_OK):
        raise CliError(f"{target}: cannot read it (permission denied)")
    return path


def load_function(reference: str, *, cache: dict | None = None, hint: str = "") -> Callable:
    """The user's function named by ``reference``, guarded by :func:`guard`.

    Args:
      reference: ``FILE.py:FUNCTION`` or ``package.module:function``.
      cache: modules already imported in this run, by real path (one execution per file).
      hint: a sentence added to the final line when the function raises.

    Raises:
      CliError: for a malformed reference, a missing file, module or attribute, or an attribute
        that is not callable.
      UserCodeError: if importing the module raises.
    """
    cache = {} if cache is None else cache
    target, _, attr = reference.rpartition(":")
    if not target or not attr:
        raise CliError(
            f"{reference!r}: name your function as FILE.py:FUNCTION or package.module:function"
        )
    as_file = target.endswith(".py") or "/" in target or os.sep in target
    if as_file:
        path = check_file(target)
        module = _import_file(path, reference, cache)
    else:
        module = _import_dotted(target, reference)
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            defined = sorted(
                k
                for k, v in vars(module).items()
                if callable(v)
                and not k.startswith("_")
                and getattr(v, "__module__", None) == module.__name__
            )
            listing = f"; it defines {', '.join(defined)}" if defined else ""
            raise CliError(f"{target} has no attribute {attr!r}{listing}") from None
    if not callable(obj):
        raise CliError(f"{reference} is not a function (it is of type {type(obj).__name__})")
    file = getattr(module, "__file__", None)
    files = {os.path.realpath(file)} if file else set()
    return guard(obj, reference, files, hint)


# --------------------------------------------------------------------------------------------
# Reporting.


def _internal_roots() -> tuple[str, ...]:
    import rdpjax

    roots = {os.path.realpath(Path(rdpjax.__file__).parent)}
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if key in paths:
            roots.add(os.path.realpath(paths[key]))
    return tuple(sorted(roots))


def _user_frames(err: UserCodeError) -> list[traceback.FrameSummary]:
    """The frames of the original traceback in the user's code.

    rdpjax, JAX, numpy and the standard library are left out; all but rdpjax's where that would
    leave none.
    """
    frames = traceback.extract_tb(err.original.__traceback__)
    roots = _internal_roots()

    def internal(frame) -> bool:
        if frame.filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>
            return True
        real = os.path.realpath(frame.filename)
        if real in err.files:
            return False
        return any(real == root or real.startswith(root + os.sep) for root in roots)

    kept = [f for f in frames if not internal(f)]
    if kept:
        return kept
    import rdpjax

    own = os.path.realpath(Path(rdpjax.__file__).parent) + os.sep
    return [
        f
        for f in frames
        if not f.filename.startswith("<") and not os.path.realpath(f.filename).startswith(own)
    ]


def format_user_error(err: UserCodeError, command: str) -> str:
    """The user's traceback (their frames), then ``rdpjax audit: error in REF: Type: message``."""
    original = err.original
    frames = _user_frames(err)
    text = ""
    if frames:
        text += "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(original), original))
    lines = [line.strip() for line in str(original).splitlines() if line.strip()]
    message = lines[0] if lines else ""
    summary = type(original).__name__ + (f": {message}" if message else "")
    tail = f" ({err.hint})" if err.hint else ""
    return text + f"rdpjax {command}: error in {err.reference}: {summary}{tail}\n"
