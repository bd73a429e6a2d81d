"""A betting audit's checkpoint file: the :class:`~rdpjax.rejection.betting_state.BettingState`.

The sequential test by betting (:func:`rdpjax.rejection.betting.betting_test`) keeps its
state in ``directory/``:data:`BETTING_CHECKPOINT` as the Rényi looks keep theirs
(:mod:`rdpjax.auditing.sequential.state`; both on the looks driver, :mod:`rdpjax.stream.looks`):
written to a temporary file that then replaces the old one (atomic), at once after a batch of at
least :data:`~rdpjax.stream.looks.SLOW_BATCH` seconds, at the end and on an interruption, and
otherwise at most every :data:`~rdpjax.stream.looks.SAVE_EVERY` seconds. It holds both
sides' outputs drawn so far (in the order they were bet on), the wealth of each strategy, the
path, and the random-number states, so a resumed test continues exactly as an uninterrupted one;
its fingerprint (mechanism, databases, claim, key, α, max_n, batch, projection) must match.
"""

from __future__ import annotations

import json

import numpy as np

from rdpjax.auditing.sequential.state import (
    CheckpointFile,
    read_record,
    same_audit,
    write_atomic,
)
from rdpjax.rejection.betting_state import BettingState

__all__ = ["BETTING_CHECKPOINT", "BettingFile"]

BETTING_CHECKPOINT = "betting.npz"
"""File name of a betting audit's checkpoint inside its folder."""

_FORMAT = 1


class BettingFile(CheckpointFile):
    """A :class:`~rdpjax.rejection.betting_state.Checkpoint` in ``directory``.

    Its arguments are :class:`~rdpjax.auditing.sequential.state.CheckpointFile`'s.
    """

    name = BETTING_CHECKPOINT
    holds = "a betting audit's draws"

    def load(self) -> BettingState | None:
        """The saved state when resuming, else ``None`` (``ValueError`` on a mismatch)."""
        if not self.wanted(self.path.exists()):
            return None
        record, (x, y) = read_record(self.path, ("x", "y"), _FORMAT)
        same_audit(self.path, record.pop("fingerprint"), self.fingerprint)
        try:
            record["logk"] = np.asarray(record["logk"], np.float64)
            record["path"] = [tuple(p) for p in record["path"]]
            return BettingState(x=x, y=y, **record)
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"cannot read the checkpoint {self.path}: {err}") from err

    def save(self, state: BettingState, now: bool) -> None:
        """Write ``state`` when ``now`` (a slow batch, the end, an interruption) or when due."""
        if not self.throttle.due(now):
            return
        record = {
            "format": _FORMAT, "fingerprint": self.fingerprint, "logk": state.logk.tolist(),
            "size": state.size, "start": state.start, "n": state.n, "path": state.path,
            "rng": state.rng, "discrete": state.discrete, "refuted": state.refuted,
            "planned": state.planned,
        }  # fmt: skip
        x, y = state.arrays()
        write_atomic(self.path, state=np.asarray(json.dumps(record)), x=x, y=y)
        self.throttle.saved()
