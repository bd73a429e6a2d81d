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

import contextlib
import signal
import sys

# Only what the parse needs is imported here (the subcommands in build_parser): the `rdpjax`
# program installs its Ctrl-C handler after these few imports, so an interrupt at any moment
# ends as exit status 130.
from rdpjax.cli._loading import UserCodeError, format_user_error
from rdpjax.cli._types import CliError, Parser

__all__ = ["CliError", "UserCodeError", "build_parser", "console_main", "main", "read_samples"]


def __getattr__(name: str):
    if name == "read_samples":  # rdpjax bound's reader, kept here for its users
        from rdpjax.cli.bound import read_samples

        return read_samples
    raise AttributeError(f"module 'rdpjax.cli' has no attribute {name!r}")


def build_parser(*, help_text: bool = True) -> Parser:
    """The ``rdpjax`` argument parser with every subcommand.

    Args:
      help_text: list the paper's experiments in ``coverage`` and ``reproduce``'s help. Listing
        them imports the mechanisms (and jax, about a second); :func:`main` asks for it only
        when the command line asks for help, so a mistake in the arguments is answered at once.
    """
    import rdpjax
    from rdpjax.cli import audit, bound, canaries, coverage, demo, reproduce, search
    from rdpjax.cli._args import catalog

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
    from rdpjax.cli._args import set_cpu_devices

    try:
        with _deferred_interrupts():
            # jax's C extensions must not get a KeyboardInterrupt while they load (a crash,
            # exit 139, was seen when one did): a Ctrl-C here is raised once they have.
            import jax  # noqa: F401

            if compilation_cache:
                from rdpjax.compilation_cache import enable_compilation_cache

                enable_compilation_cache()
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
        # starts on a fresh line, after the ^C the terminal echoed. A second Ctrl-C waits until
        # it is out (and is then dropped: the status is 130 already).
        detail = f"; {err}" if str(err) else ""
        lead = "\n" if sys.stderr.isatty() else ""
        with contextlib.suppress(KeyboardInterrupt), _deferred_interrupts():
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

    pressed = _watch_interrupts()
    warnings.showwarning = _one_line_warning
    sys.stdout = _UntilReaderGone(sys.stdout)
    try:
        status = main(compilation_cache=True)
    except KeyboardInterrupt:  # before main's own handler: while importing, or parsing
        _ignore_interrupts()
        print("rdpjax: interrupted", file=sys.stderr)
        status = 130
    _ignore_interrupts()  # from here on the status is decided; a late Ctrl-C changes nothing
    if pressed and status != 130:
        # Python drops a KeyboardInterrupt raised where an exception cannot propagate (a
        # garbage-collector callback of jax's, a thread): the work went on, but Ctrl-C was
        # pressed, and a wrapper must see 130 all the same.
        print("rdpjax: interrupted", file=sys.stderr)
        status = 130
    # Leave at once, without the interpreter's teardown: with jax's threads stopped mid-work it
    # could crash (exit 139 was seen once in eleven interrupts of a resumed audit), and jax's
    # exit handlers could print a traceback. What is to be kept is kept by now (reports, the
    # checkpoint, the user's worker closed); the streams are flushed here.
    _exit_now(status)
    return status  # not reached


class _UntilReaderGone:
    """``sys.stdout`` that drops its output once the reader has gone (``rdpjax … | head -1``).

    Writing to a pipe whose reader has exited raised BrokenPipeError: a traceback, and exit
    status 1, which says "refuted". Now the command goes on and exits with its own status.
    """

    def __init__(self, stream) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        """From now on write nowhere: file descriptor 1 to the null device, for the buffer."""
        import os

        self._gone = True
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _watch_interrupts() -> list:
    """Install a Ctrl-C handler that raises KeyboardInterrupt, as Python's does, and remembers.

    Returns the list the handler appends to: non-empty once Ctrl-C was pressed.
    """
    pressed: list = []

    def handler(signum, frame):
        pressed.append(signum)
        raise KeyboardInterrupt

    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread
        pass
    return pressed


@contextlib.contextmanager
def _deferred_interrupts():
    """Hold a Ctrl-C pressed inside the block, and raise it as KeyboardInterrupt at its end."""
    pressed: list = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    except ValueError:  # not the main thread: nothing to hold
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


def _ignore_interrupts() -> None:
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to do
        pass


def _exit_now(status: int) -> None:
    """``os._exit(status)`` after flushing stdout and stderr (no teardown, no atexit)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
