"""What a sequential audit has drawn and decided so far, and its checkpoint file.

Expensive draws are the user's most costly asset, so a sequential audit given a ``checkpoint``
folder keeps them there (:class:`LooksFile`, the looks driver's checkpoint,
:mod:`rdpjax.stream.looks`): after every pair of batches and at every look it writes
:data:`CHECKPOINT` — the binned counts of both sides, the outputs drawn, the random-number state
of each side, the settings fixed by the pilot, and every look so far — to a temporary file that
then replaces the old one (``os.replace``, atomic on POSIX and Windows), so a kill at any moment
leaves the last complete checkpoint. A look, a batch that took at least
:data:`~rdpjax.stream.looks.SLOW_BATCH` seconds to draw and an interruption are saved at once;
cheaper batches at most every :data:`~rdpjax.stream.looks.SAVE_EVERY` seconds
(:class:`~rdpjax.stream.looks.Throttle`), so an interruption loses at most the batch under way
and a couple of seconds of cheap draws. A resumed audit starts
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
import zipfile
from pathlib import Path

import numpy as np

from rdpjax.auditing.sequential.engine import Totals
from rdpjax.auditing.sequential.setup import LookSetup
from rdpjax.stream.looks import Run, Throttle

__all__ = [
    "CHECKPOINT",
    "CheckpointFile",
    "LooksFile",
    "State",
    "load_state",
    "same_audit",
    "save_state",
    "write_atomic",
]

CHECKPOINT = "sequential.npz"
"""File name of the checkpoint inside the audit's folder."""

_FORMAT = 1


@dataclasses.dataclass
class State:
    """A sequential audit's checkpoint record (host values only): the file's fields.

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
      looks: one dict per look taken (:func:`rdpjax.auditing.sequential.engine.look_record`).
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

    def to_json(self) -> str:
        """The state as JSON, with the format number and without ``counts`` (saved as arrays)."""
        record = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("counts",)}
        record["format"] = _FORMAT
        return json.dumps(record)


def save_state(state: State, directory) -> None:
    """Write ``state`` to ``directory/``:data:`CHECKPOINT` atomically (:func:`write_atomic`)."""
    write_atomic(
        Path(directory) / CHECKPOINT,
        state=np.asarray(state.to_json()),
        counts_p=np.asarray(state.counts[0], np.float64),
        counts_q=np.asarray(state.counts[1], np.float64),
    )


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


def same_audit(path: Path, saved: dict, wanted: dict) -> None:
    """``ValueError`` naming the first field where a checkpoint's fingerprint differs."""
    if saved != wanted:
        field = next(
            (k for k in sorted(set(saved) | set(wanted)) if saved.get(k) != wanted.get(k)), "?"
        )
        raise ValueError(
            f"{path} belongs to another audit ({field}: {saved.get(field)!r} there, "
            f"{wanted.get(field)!r} now); resume with the same settings, or use another folder."
        )


def load_state(directory, fingerprint: dict) -> State | None:
    """The state saved in ``directory`` (``None`` when there is none).

    Raises:
      ValueError: if the file is unreadable, or was written by an audit whose fingerprint differs
        from ``fingerprint`` (naming the first field that differs).
    """
    path = Path(directory) / CHECKPOINT
    if not path.exists():
        return None
    record, counts = read_record(path, ("counts_p", "counts_q"), _FORMAT)
    same_audit(path, record["fingerprint"], json.loads(json.dumps(fingerprint)))
    record.pop("saved_at", None)  # written by rdpjax before the looks driver
    try:
        setup = LookSetup.from_json(record.pop("setup"))
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"cannot read the checkpoint {path}: its look setup: {err}") from err
    try:
        return State(counts=counts, setup=setup, **record)
    except TypeError as err:
        raise ValueError(f"cannot read the checkpoint {path}: {err}") from err


def read_record(path: Path, arrays: tuple[str, ...], version: int) -> tuple[dict, list]:
    """A checkpoint file's JSON record (with its fingerprint) and its named arrays.

    Raises:
      ValueError: naming the file, for one that cannot be read (cut short, it is no zip
        archive), of another format, or without its fingerprint.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            record = json.loads(str(data["state"]))
            values = [np.array(data[name]) for name in arrays]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"cannot read the checkpoint {path}: {err}") from err
    if not isinstance(record, dict) or record.pop("format", None) != version:
        raise ValueError(f"{path} was written by another version of rdpjax; remove it.")
    if "fingerprint" not in record:
        raise ValueError(f"cannot read the checkpoint {path}: it has no fingerprint.")
    return record, values


class CheckpointFile:
    """One audit's checkpoint file in ``directory`` (the Rényi looks' or the betting test's).

    Args:
      directory: the audit's checkpoint folder.
      fingerprint: JSON-ready description of the audit; a saved state with another is refused.
      resume: continue from the saved state (it must exist); without it, a saved state is an
        error rather than silently overwritten.
    """

    name = CHECKPOINT
    """The file's name in the folder."""
    holds = "an audit's draws"
    """What the file holds, in the error that refuses to overwrite it."""

    def __init__(self, directory, fingerprint: dict, resume: bool) -> None:
        self.path = Path(directory) / self.name
        self.fingerprint = json.loads(json.dumps(fingerprint))  # as it reads back
        self.resume, self.throttle = resume, Throttle()

    def wanted(self, exists: bool) -> bool:
        """Whether to read the saved state (``exists``): ``ValueError`` where resume says no."""
        if exists and not self.resume:
            raise ValueError(
                f"{self.path} holds {self.holds}; continue it with Looks(…, resume=True) "
                "(--resume), or use another folder."
            )
        if not exists and self.resume:
            raise ValueError(
                f"no checkpoint to resume in {self.path.parent} ({self.name} is missing)."
            )
        return exists


class LooksFile(CheckpointFile):
    """The Rényi looks' :class:`~rdpjax.stream.looks.Checkpoint`: :data:`CHECKPOINT`."""

    def __init__(self, directory, fingerprint: dict, resume: bool) -> None:
        super().__init__(directory, fingerprint, resume)
        self.looks = 0

    def load(self) -> Run | None:
        """The saved run when resuming, else ``None`` (``ValueError`` on a mismatch)."""
        state = load_state(self.path.parent, self.fingerprint)
        if not self.wanted(state is not None) or state is None:
            return None
        self.looks = len(state.looks)
        totals = Totals(
            state.setup, tuple(state.counts), tuple(state.outside), state.pilot, tuple(state.looks)
        )
        return Run(totals, tuple(state.drawn), tuple(state.pieces), state.rng)

    def save(self, run: Run, now: bool) -> None:
        """Write ``run`` when ``now``, after a new look, or when the throttle is due."""
        totals: Totals = run.stat
        if not self.throttle.due(now or len(totals.looks) != self.looks):  # a look: at once
            return
        record = State(
            fingerprint=self.fingerprint, setup=totals.setup, counts=list(totals.counts),
            outside=list(totals.outside), drawn=list(run.drawn), pieces=list(run.pieces),
            rng=run.rng, pilot=totals.pilot, looks=list(totals.looks),
        )  # fmt: skip
        save_state(record, self.path.parent)
        self.throttle.saved()
        self.looks = len(totals.looks)
