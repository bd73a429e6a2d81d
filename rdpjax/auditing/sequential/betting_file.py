"""A betting audit's checkpoint file: the :class:`~rdpjax.rejection.betting.BettingState`.

The sequential test by betting (:func:`rdpjax.rejection.betting.betting_test`) keeps its
state in ``directory/``:data:`BETTING_CHECKPOINT` as the Rényi looks keep theirs
(:mod:`rdpjax.auditing.sequential.state`): written to a temporary file that then replaces the
old one (atomic), after a batch of at least :data:`~rdpjax.auditing.sequential.state.SLOW_BATCH`
seconds at once and otherwise at most every
:data:`~rdpjax.auditing.sequential.state.SAVE_EVERY` seconds, and at the end. It holds both
sides' outputs drawn so far (in the order they were bet on), the wealth of each strategy, the
path, and the random-number states, so a resumed test continues exactly as an uninterrupted one;
its fingerprint (mechanism, databases, claim, key, α, max_n, batch, projection) must match.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from rdpjax.auditing.sequential.state import SAVE_EVERY, SLOW_BATCH, write_atomic
from rdpjax.rejection.betting import BettingState

__all__ = ["BETTING_CHECKPOINT", "BettingFile"]

BETTING_CHECKPOINT = "betting.npz"
"""File name of a betting audit's checkpoint inside its folder."""

_FORMAT = 1


class BettingFile:
    """A :class:`~rdpjax.rejection.betting.Checkpoint` in ``directory``.

    Args:
      directory: the audit's checkpoint folder.
      fingerprint: JSON-ready description of the audit; a saved state with another is refused.
      resume: continue from the saved state (it must exist); without it, a saved state is an
        error rather than silently overwritten.
    """

    def __init__(self, directory: Any, fingerprint: dict, resume: bool) -> None:
        self.path = Path(directory) / BETTING_CHECKPOINT
        self.fingerprint = json.loads(json.dumps(fingerprint))  # as it reads back
        self.resume = resume
        self.saved_at = self.last_batch = time.monotonic()

    def load(self) -> BettingState | None:
        """The saved state when resuming, else ``None`` (``ValueError`` on a mismatch)."""
        if not self.path.exists():
            if self.resume:
                raise ValueError(
                    f"no checkpoint to resume in {self.path.parent} ({BETTING_CHECKPOINT} is "
                    "missing)."
                )
            return None
        if not self.resume:
            raise ValueError(
                f"{self.path} holds a betting audit's draws; continue it with Looks(…, "
                "resume=True) (--resume), or use another folder."
            )
        try:
            with np.load(self.path, allow_pickle=False) as data:
                record = json.loads(str(data["state"]))
                x, y = np.array(data["x"]), np.array(data["y"])
        except (OSError, ValueError, KeyError) as err:
            raise ValueError(f"cannot read the checkpoint {self.path}: {err}") from err
        if record.pop("format", None) != _FORMAT:
            raise ValueError(f"{self.path} was written by another version of rdpjax; remove it.")
        saved = record.pop("fingerprint")
        if saved != self.fingerprint:
            field = next(
                k for k in sorted(set(saved) | set(self.fingerprint))
                if saved.get(k) != self.fingerprint.get(k)
            )  # fmt: skip
            raise ValueError(
                f"{self.path} belongs to another audit ({field}: {saved.get(field)!r} there, "
                f"{self.fingerprint.get(field)!r} now); resume with the same settings, or use "
                "another folder."
            )
        record["logk"] = np.asarray(record["logk"], np.float64)
        record["path"] = [tuple(p) for p in record["path"]]
        return BettingState(x=x, y=y, **record)

    def save(self, state: BettingState, done: bool) -> None:
        """Write ``state`` when its batch was slow, enough time has passed, or the test is done."""
        now = time.monotonic()
        slow, due = now - self.last_batch >= SLOW_BATCH, now - self.saved_at >= SAVE_EVERY
        self.last_batch = now
        if not (slow or due or done):
            return
        record = {
            "format": _FORMAT, "fingerprint": self.fingerprint, "logk": state.logk.tolist(),
            "size": state.size, "start": state.start, "n": state.n, "path": state.path,
            "rng": state.rng, "discrete": state.discrete, "refuted": state.refuted,
            "planned": state.planned,
        }  # fmt: skip
        x, y = state.arrays()
        write_atomic(self.path, state=np.asarray(json.dumps(record)), x=x, y=y)
        self.saved_at = time.monotonic()
