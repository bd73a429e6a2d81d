"""What a sequential audit has drawn and decided so far, and its checkpoint file.

Expensive draws are the user's most costly asset, so a sequential audit given a ``checkpoint``
folder keeps them there: after every batch (at most every :data:`SAVE_EVERY` seconds) and at
every look it writes :data:`CHECKPOINT` — the binned counts of both sides, the outputs drawn,
the random-number state of each side, the settings fixed by the pilot, and every look so far —
to a temporary file that then replaces the old one (``os.replace``, atomic on POSIX and
Windows), so a kill at any moment leaves the last complete checkpoint. A batch that took at least
:data:`SLOW_BATCH` seconds to draw is always saved at once; cheaper ones at most every
:data:`SAVE_EVERY` seconds, so an interruption loses at most the batch under way and a couple of
seconds of cheap draws. A resumed audit starts
from it: the looks already taken stay taken (their α is spent), the draws continue from the
saved random state, and the result equals that of an uninterrupted run with the same key.

A checkpoint belongs to one audit: :attr:`State.fingerprint` records what defines it (the
mechanism's name, the databases, orders, claim, schedule, key, options), and resuming with any
of them changed is an error rather than a silently different audit.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from rdpjax.auditing.sequential.setup import LookSetup

__all__ = [
    "CHECKPOINT",
    "SAVE_EVERY",
    "SLOW_BATCH",
    "State",
    "load_state",
    "save_state",
    "write_atomic",
]

CHECKPOINT = "sequential.npz"
"""File name of the checkpoint inside the audit's folder."""

SAVE_EVERY = 2.0
"""Seconds between checkpoints after cheap batches (every look is saved at once)."""

SLOW_BATCH = 0.05
"""A batch that took this many seconds or more to draw is saved as soon as it is binned."""

_FORMAT = 1


@dataclasses.dataclass
class State:
    """The mutable state of a sequential audit (host values only).

    Attributes:
      fingerprint: JSON-ready description of the audit (:mod:`rdpjax.auditing.sequential.state`).
      setup: the settings fixed before the certifying draws (kind, grid, per-look h, τ, β)
        and the tables of the discrete outputs seen.
      counts: ``[P, Q]`` float64 accumulators (discrete counts, or linear-binning pairs).
      outside: ``[P, Q]`` numbers of outputs clamped onto the edge of the grid.
      drawn: ``[P, Q]`` certifying outputs drawn.
      pieces: ``[P, Q]`` batches drawn (a JAX sampler's batch ``j`` uses ``fold_in(key, j)``).
      rng: ``[P, Q]`` numpy bit-generator states (black boxes), or ``None``.
      pilot: outputs per side drawn for the pilot (0 for discrete outputs).
      looks: one dict per look taken (:func:`rdpjax.auditing.sequential.sequential_audit`).
    """

    fingerprint: dict
    setup: LookSetup
    counts: list
    outside: list
    drawn: list
    pieces: list
    rng: list | None
    pilot: int
    looks: list = dataclasses.field(default_factory=list)
    saved_at: float = 0.0

    def to_json(self) -> str:
        """The state as JSON, with the format number and without ``counts`` (saved as arrays)."""
        record = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("counts",)}
        record["format"] = _FORMAT
        return json.dumps(record)


def save_state(state: State, directory, *, force: bool = False) -> bool:
    """Write ``state`` to ``directory/``:data:`CHECKPOINT` atomically; return whether it wrote.

    Unless ``force``, it writes only when :data:`SAVE_EVERY` seconds have passed since the last
    save.
    """
    now = time.monotonic()
    if not force and now - state.saved_at < SAVE_EVERY:
        return False
    write_atomic(
        Path(directory) / CHECKPOINT,
        state=np.asarray(state.to_json()),
        counts_p=np.asarray(state.counts[0], np.float64),
        counts_q=np.asarray(state.counts[1], np.float64),
    )
    state.saved_at = now
    return True


def write_atomic(path: Path, **arrays: np.ndarray) -> None:
    """``numpy.savez`` of ``arrays`` to ``path`` through a temporary file that replaces it.

    ``os.replace`` is atomic on POSIX and Windows: a kill at any moment leaves the old file or
    the new one whole. The folder is made if needed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)  # pyright: ignore[reportArgumentType]
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the checkpoint is a plain file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_state(directory, fingerprint: dict) -> State | None:
    """The state saved in ``directory`` (``None`` when there is none).

    Raises:
      ValueError: if the file is unreadable, or was written by an audit whose fingerprint differs
        from ``fingerprint`` (naming the first field that differs).
    """
    path = Path(directory) / CHECKPOINT
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            record = json.loads(str(data["state"]))
            counts = [np.array(data["counts_p"]), np.array(data["counts_q"])]
    except (OSError, ValueError, KeyError) as err:
        raise ValueError(f"cannot read the checkpoint {path}: {err}") from err
    if record.pop("format", None) != _FORMAT:
        raise ValueError(f"{path} was written by another version of rdpjax; remove it.")
    saved = record["fingerprint"]
    wanted = json.loads(json.dumps(fingerprint))  # the same JSON round trip as the saved one
    if saved != wanted:
        field = next(
            (k for k in sorted(set(saved) | set(wanted)) if saved.get(k) != wanted.get(k)), "?"
        )
        raise ValueError(
            f"{path} belongs to another audit ({field}: {saved.get(field)!r} there, "
            f"{wanted.get(field)!r} now); resume with the same settings, or use another folder."
        )
    record.pop("saved_at", None)
    try:
        setup = LookSetup.from_json(record.pop("setup"))
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"cannot read the checkpoint {path}: its look setup: {err}") from err
    return State(counts=counts, setup=setup, **record)
