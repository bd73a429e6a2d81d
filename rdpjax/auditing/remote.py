"""A numpy black box run in another Python interpreter, its outputs streamed back to rdpjax.

Some mechanisms cannot be imported next to rdpjax: their library pins versions that conflict
with rdpjax's (Tumult Core pins numpy < 2). :class:`RemoteSampler` starts a worker in the
other interpreter (``PYTHON -u -c SOURCE``, the source of :mod:`rdpjax.auditing._remote_worker`,
which needs only the standard library and numpy there), which imports the user's file and
serves draws. The sampler itself is a black box ``sample(rng, database, n)`` like any other, so
every route of :func:`rdpjax.audit` takes it: draws in memory, streamed, sequential (with
checkpoints).

**Seeds.** Each call draws one seed from the ``numpy.random.Generator`` rdpjax passes
(``rng.integers(2**63)``) and the worker calls ``FUNCTION(numpy.random.default_rng(seed),
database, n)``: the draws are a deterministic function of rdpjax's key, and a checkpointed
generator state resumes them exactly.

**Transport.** Arrays cross as ``.npy`` bytes (the format every numpy version reads; no pickle,
which does not cross numpy 1 and 2), in length-prefixed frames over the worker's standard
streams. A database is sent once and then named by its slot.

**Errors.** Every failure is a :class:`RemoteError` with a one-line message: no such
interpreter, one without numpy, an exception while importing the file or inside the function
(its type and message; the remote traceback is kept in :attr:`RemoteError.traceback`), a worker
that died. The worker exits when its standard input closes: at :meth:`RemoteSampler.close`, when
the sampler is garbage collected, or when rdpjax's process ends.
"""

from __future__ import annotations

import collections
import io
import json
import os
import select
import struct
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RemoteError", "RemoteSampler"]

_POLL = 0.25
"""Seconds the main thread waits for the worker's output before it looks at pending signals."""

_CAN_SELECT = os.name != "nt"
"""Whether ``select`` takes pipes (not on Windows, where reads simply block)."""

_HEADER = struct.Struct("<cQ")
_MAGIC = b"rdpjax-worker-1\n"  # the worker's first bytes (_remote_worker.MAGIC)
_SLOTS = 8  # databases the worker keeps (x and x' need two)
_WORKER = Path(__file__).with_name("_remote_worker.py")


class RemoteError(RuntimeError):
    """A failure of the worker or of the code it runs, as one line.

    Attributes:
      traceback: the remote traceback, when the user's code raised (else ``""``).
    """

    def __init__(self, message: str, traceback: str = ""):
        super().__init__(message)
        self.traceback = traceback


class RemoteSampler:
    """``sample(rng, database, n)`` that calls ``FILE.py:FUNCTION`` in another interpreter.

    ``FUNCTION`` follows the numpy convention of :func:`rdpjax.audit`: ``FUNCTION(rng,
    database, n)`` with ``rng`` a ``numpy.random.Generator`` (of the other interpreter's numpy)
    and ``database`` a numpy array, returning ``n`` outputs ``(n,)`` or ``(n, d)``.

    Args:
      python: the other interpreter's executable (it must have numpy ≥ 1.17).
      path: the file defining the function (imported there, its folder first on ``sys.path``).
      function: the function's name in it (dotted for ``Class.method``).

    Attributes:
      __name__: ``function``, the name reports give the mechanism.
      interpreter: ``{"python": path as given, "executable", "python_version",
        "numpy_version"}``, as report.json records it.
      source_sha256: the SHA-256 of the function's source, or ``None``.

    Raises:
      RemoteError: if the interpreter cannot be started, has no numpy, or importing the file
        (or finding the function) fails.

    Example:
      >>> with RemoteSampler("/opt/tumult/bin/python", "mech.py", "noisy_count") as sample:
      ...     report = rdpjax.audit(key, sample, x, x_prime, n=10**5, claim=claim)
    """

    def __init__(self, python: str, path: str, function: str):
        self.python, self.path, self.__name__ = str(python), str(path), function
        self._lock = threading.Lock()
        self._slots: list[tuple[Any, int]] = []  # (database as passed, slot)
        self._closed = self._busy = False
        source = _WORKER.read_text()
        try:
            self._proc = subprocess.Popen(
                [self.python, "-u", "-c", source, self.path, function],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except FileNotFoundError:
            raise RemoteError(f"no Python interpreter at {self.python}") from None
        except PermissionError:
            raise RemoteError(f"{self.python}: not executable") from None
        except OSError as err:
            raise RemoteError(f"{self.python}: cannot run it ({err})") from None
        self._finalizer = weakref.finalize(self, _stop, self._proc, False)
        self._stderr = _StderrPump(self._proc.stderr)
        try:
            assert self._proc.stdout is not None
            if self._read(len(_MAGIC)) != _MAGIC:
                raise self._died("starting", "")
            tag, payload = self._receive("starting")
            if tag == b"E":
                raise self._failure(payload)
            if tag != b"H":
                raise self._died("starting", f"it answered {tag!r}, not rdpjax's worker")
            hello = json.loads(payload.decode())
        except BaseException:
            self.close()
            raise
        self.interpreter = {
            "python": self.python,
            "executable": hello["executable"],
            "python_version": hello["python"],
            "numpy_version": hello["numpy"],
        }
        self.source_sha256: str | None = hello["source_sha256"]
        self._stderr.forward()

    # ----------------------------------------------------------------------------------------
    # The black box.

    def __call__(self, rng: np.random.Generator, database: Any, n: int) -> np.ndarray:
        """``n`` outputs of the remote function on ``database``, seeded from ``rng``."""
        seed = int(rng.integers(2**63))
        with self._lock:
            if self._closed:
                raise RemoteError(f"the worker in {self.python} was closed")
            self._busy = True
            slot = self._slot(database)
            self._send(b"S", json.dumps({"slot": slot, "n": int(n), "seed": seed}).encode())
            tag, payload = self._receive("drawing")
            self._busy = False
        if tag == b"E":
            raise self._failure(payload)
        try:
            return np.load(io.BytesIO(payload), allow_pickle=False)
        except ValueError as err:
            message = f"the worker in {self.python} sent an unreadable array: {err}"
            raise RemoteError(message) from None

    def _slot(self, database: Any) -> int:
        """The worker's slot holding ``database``, sent first if it holds none."""
        for held, slot in self._slots:
            if held is database:
                return slot
        arr = np.asarray(database)
        for held, slot in self._slots:
            if _same(np.asarray(held), arr):
                return slot
        if arr.dtype.hasobject:
            raise ValueError(f"a database sent to {self.python} must hold numbers")
        slot = len(self._slots) % _SLOTS if len(self._slots) < _SLOTS else self._slots[0][1]
        if len(self._slots) >= _SLOTS:
            self._slots.pop(0)
        self._slots.append((database, slot))
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(arr), allow_pickle=False)
        self._send(b"B", json.dumps({"slot": slot}).encode() + b"\n" + buffer.getvalue())
        return slot

    # ----------------------------------------------------------------------------------------
    # Lifetime.

    def close(self) -> None:
        """Stop the worker: its input closed, then (mid-draw, or after 5 s) killed."""
        self._closed = True
        self._finalizer.detach()
        _stop(self._proc, self._busy)
        self._stderr.join()

    def __enter__(self) -> RemoteSampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------------------
    # Frames and failures.

    def _send(self, tag: bytes, payload: bytes) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(_HEADER.pack(tag, len(payload)) + payload)
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died("drawing", "") from None

    def _read(self, size: int) -> bytes:
        """``size`` bytes of the worker's output (fewer only if it closed it).

        The pipe is read with ``os.read`` on its descriptor after ``select`` says it is ready,
        in waits of :data:`_POLL` seconds: a Ctrl-C whose signal the kernel gave to one of
        JAX's threads is then still seen by the main thread within ``_POLL`` seconds, instead of
        when the worker next writes (a blocking read is not interrupted by a signal delivered to
        another thread). The buffered reader is never used, so nothing waits in its buffer.
        """
        stdout = self._proc.stdout
        assert stdout is not None
        fd, parts, got = stdout.fileno(), [], 0
        while got < size:
            if _CAN_SELECT:
                while not select.select([fd], [], [], _POLL)[0]:
                    pass  # back in the interpreter: pending signals run here
            chunk = os.read(fd, min(size - got, 1 << 20))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def _receive(self, doing: str) -> tuple[bytes, bytes]:
        head = self._read(_HEADER.size)
        if len(head) == _HEADER.size:
            tag, size = _HEADER.unpack(head)
            payload = self._read(size)
            if len(payload) == size:
                return tag, payload
        raise self._died(doing, "")

    def _died(self, doing: str, detail: str) -> RemoteError:
        self._busy = False
        try:
            status = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        self._stderr.join()
        why = detail or (f"exited with status {status}" if status is not None else "stopped")
        if doing == "starting":
            last = next((line for line in reversed(self._stderr.tail) if line.strip()), "")
            tail = f": {last.strip()}" if last else ""
            return RemoteError(
                f"{self.python} did not start rdpjax's worker ({why}{tail}); it must be "
                "a Python interpreter ≥ 3.8 with numpy"
            )
        return RemoteError(f"the worker in {self.python} died while {doing} ({why})")

    def _failure(self, payload: bytes) -> RemoteError:
        record = json.loads(payload.decode())
        kind, message = record["type"], record["message"].strip().splitlines()
        summary = kind + (f": {message[0].strip()}" if message else "")
        where = record["where"]
        if where == "numpy":
            text = (
                f"{self.python} has no usable numpy ({summary}); install it there: "
                f"{self.python} -m pip install numpy"
            )
        elif where == "import":
            text = f"importing {self.path} in {self.python} raised {summary}"
        elif where == "attribute":
            text = f"{self.path} has no function {self.__name__!r} (read by {self.python})"
        else:
            text = f"the mechanism raised in {self.python}: {summary}"
        return RemoteError(text, record["traceback"])


class _StderrPump:
    """The worker's standard error, read on a thread.

    The last 20 lines are kept (for the message of a worker that failed to start) and, once
    :meth:`forward` is called, every line is copied to ours. It holds no reference to the
    sampler, so that a sampler nobody holds is collected (and its worker stopped).
    """

    def __init__(self, stream):
        self.tail: collections.deque[str] = collections.deque(maxlen=20)
        self._lock = threading.Lock()
        self._forwarding = False
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace")
            with self._lock:
                self.tail.append(line)
                if self._forwarding:
                    sys.stderr.write(line)
                    sys.stderr.flush()

    def forward(self) -> None:
        """Copy what came so far (warnings printed by the import) and all that follows."""
        with self._lock:
            sys.stderr.write("".join(self.tail))
            self._forwarding = True

    def join(self) -> None:
        self._thread.join(timeout=1.0)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))


def _stop(proc: subprocess.Popen, now: bool) -> None:
    """Close ``proc``'s input (the worker then exits); kill it if ``now`` or after 5 s."""
    if proc.stdin is not None and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass
    if proc.poll() is None:
        if now:
            proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for stream in (proc.stdout,):
        if stream is not None:
            stream.close()
