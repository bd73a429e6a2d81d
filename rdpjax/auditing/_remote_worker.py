"""The worker :class:`rdpjax.auditing.remote.RemoteSampler` runs in another Python interpreter.

Its source is passed whole as ``PYTHON -u -c SOURCE FILE.py FUNCTION``: it imports only the
standard library and numpy (never rdpjax), so it runs under any Python ≥ 3.8 with any numpy ≥
1.17, whatever else that interpreter has installed. It imports ``FILE.py``, looks up
``FUNCTION`` and serves draws over its standard streams until its standard input closes.

**Frames.** Every message, both ways, after the fixed :data:`MAGIC` line the worker writes
first, is one byte of tag, eight bytes of length (little-endian),
then that many bytes. From the worker: ``H`` (JSON: the interpreter's path, Python and numpy
versions, the SHA-256 of the function's source), once, after the import; ``A`` (an array in
``.npy`` format, which every numpy version reads and writes, no pickle); ``E`` (JSON: where it
failed, the exception's type, its message, the traceback). To the worker: ``B`` (JSON header
line with a slot number, then a database in ``.npy`` format), ``S`` (JSON: the slot, ``n`` and a
seed): one call ``FUNCTION(numpy.random.default_rng(seed), database, n)``, answered ``A`` or
``E``.

The protocol owns the worker's file descriptor 1: ``print`` in the user's code (and C-level
writes) go to its standard error instead. Ctrl-C is left to rdpjax (the worker ignores SIGINT
and exits when rdpjax closes its standard input, or at its next write once rdpjax is gone).
"""

import hashlib
import json
import os
import signal
import struct
import sys
import traceback

_HEADER = struct.Struct("<cQ")
MAGIC = b"rdpjax-worker-1\n"  # first on the wire: rdpjax checks it before any frame


def _send(out, tag, payload):
    out.write(_HEADER.pack(tag, len(payload)) + payload)
    out.flush()


def _receive(inp):
    """``(tag, payload)`` of the next frame, or ``(None, b"")`` when the input has closed."""
    head = inp.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None, b""
    tag, size = _HEADER.unpack(head)
    payload = inp.read(size)
    if len(payload) < size:
        return None, b""
    return tag, payload


def _error(out, where, err):
    lines = traceback.format_exception(type(err), err, err.__traceback__)
    record = {
        "where": where,
        "type": type(err).__name__,
        "message": str(err),
        "traceback": "".join(lines),
    }
    _send(out, b"E", json.dumps(record).encode())


def _load(path, name):
    """The function ``name`` (dotted) of the file ``path``, its folder first on ``sys.path``."""
    import importlib.util

    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location("rdpjax_remote_mechanism", path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot import " + path + " (not a Python file?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _source_sha256(fn):
    import inspect

    try:
        return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()
    except (OSError, TypeError):
        return None


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")  # the protocol's channel
    os.dup2(2, 1)  # the user's prints (and C-level writes) go to stderr
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    out.write(MAGIC)
    try:
        import io

        import numpy as np

        np.random.default_rng  # noqa: B018 - numpy ≥ 1.17
    except Exception as err:  # noqa: BLE001 - any failure is reported, not raised
        _error(out, "numpy", err)
        return
    path, name = sys.argv[1], sys.argv[2]
    try:
        fn = _load(path, name)
    except AttributeError as err:
        _error(out, "attribute", err)
        return
    except BaseException as err:  # noqa: BLE001 - SystemExit in the user's module too
        _error(out, "import", err)
        return
    if not callable(fn):
        _error(out, "attribute", TypeError(name + " is not a function"))
        return
    hello = {
        "executable": sys.executable,
        "python": ".".join(str(v) for v in sys.version_info[:3]),
        "numpy": np.__version__,
        "source_sha256": _source_sha256(fn),
    }
    _send(out, b"H", json.dumps(hello).encode())
    databases = {}
    while True:
        tag, payload = _receive(inp)
        if tag is None:
            return
        if tag == b"B":
            head, _, body = payload.partition(b"\n")
            databases[json.loads(head.decode())["slot"]] = np.load(
                io.BytesIO(body), allow_pickle=False
            )
            continue
        request = json.loads(payload.decode())
        try:
            rng = np.random.default_rng(request["seed"])
            arr = np.asarray(fn(rng, databases[request["slot"]], request["n"]))
            if arr.dtype.hasobject:
                raise TypeError("the function returned outputs of dtype object; numbers are needed")
            buffer = io.BytesIO()
            np.save(buffer, arr, allow_pickle=False)
        except BaseException as err:  # noqa: BLE001 - SystemExit in the user's code too
            _error(out, "call", err)
            continue
        _send(out, b"A", buffer.getvalue())


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # rdpjax has gone: nobody to answer
        pass
