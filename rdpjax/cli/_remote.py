"""``rdpjax audit FILE.py:FUNCTION --python PATH``: the user's function in another interpreter.

The option, and the :class:`rdpjax.auditing.remote.RemoteSampler` it builds: the function runs
in ``PATH`` (a virtual environment whose packages conflict with rdpjax's), called as a ``--numpy``
function ``FUNCTION(rng, database, n)``, its outputs streamed back. Any failure there (no such
interpreter, no numpy in it, the file's import or the function raising, a worker that died) is
one line and exit status 2.
"""

from __future__ import annotations

from rdpjax.cli._loading import check_file
from rdpjax.cli._types import CliError

__all__ = ["add_python_option", "remote_sampler"]


def add_python_option(parser) -> None:
    """``--python PATH``."""
    parser.add_argument(
        "--python",
        metavar="PATH",
        default=None,
        help="run FILE.py:FUNCTION in the Python interpreter PATH (e.g. another virtual "
        "environment's bin/python, which needs numpy but not rdpjax), called as with --numpy, "
        "its outputs streamed back",
    )


def remote_sampler(reference: str, python: str):
    """The black box running ``reference`` (``FILE.py:FUNCTION``) in the interpreter ``python``.

    Raises:
      CliError: for a reference that names no file, a missing file, or a worker that cannot
        start there (no such interpreter, no numpy, the import raising, no such function).
    """
    target, _, attr = reference.rpartition(":")
    if not target.endswith(".py") or not attr:
        raise CliError(
            f"{reference!r}: with --python name your function as FILE.py:FUNCTION (the file is "
            "imported by the other interpreter)"
        )
    path = check_file(target)
    # Imported here: the rdpjax.auditing package imports jax, which a mistake in the
    # arguments should not wait for.
    from rdpjax.auditing.remote import RemoteError, RemoteSampler

    try:
        return RemoteSampler(python, str(path.resolve()), attr)
    except RemoteError as err:
        raise CliError(str(err)) from err
