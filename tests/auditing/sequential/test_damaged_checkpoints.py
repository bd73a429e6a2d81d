"""Checkpoints that are damaged, foreign, or a file (found by a hunt, 2026-12-07): a ValueError
that names the file, never a BadZipFile, KeyError or TypeError from deep inside (on the command
line those were a traceback and exit status 1, which says "refuted")."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import rdpjax
from rdpjax.stream import Looks

X, X_PRIME = np.array([1.0]), np.array([0.0])


def _gsum(rng, db, n):
    return np.sum(db) + rng.standard_normal(n)


def _audit(folder, claim, resume=True):
    return rdpjax.audit(
        jax.random.key(0), _gsum, X, X_PRIME, claim=claim, progress=False,
        n=Looks(max_n=2000, checkpoint=folder, resume=resume),
    )  # fmt: skip


CLAIMS = {"sequential.npz": rdpjax.claims.zcdp(0.5), "betting.npz": rdpjax.claims.gdp(1.0)}


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_a_checkpoint_cut_short_is_a_value_error(tmp_path, name):
    _audit(tmp_path / "good", CLAIMS[name], resume=False)
    data = (tmp_path / "good" / name).read_bytes()
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / name).write_bytes(data[: len(data) // 2])  # a partial copy, a full disk
    with pytest.raises(ValueError, match=f"cannot read the checkpoint .*{name}"):
        _audit(tmp_path / "cut", CLAIMS[name])


@pytest.mark.parametrize(
    ("state", "match"),
    [("[1, 2]", "another version"), ('{"format": 1}', "no fingerprint")],
)
def test_a_foreign_record_is_a_value_error(tmp_path, state, match):
    np.savez(tmp_path / "sequential.npz", state=np.asarray(state), counts_p=np.zeros(2),
             counts_q=np.zeros(2))  # fmt: skip
    with pytest.raises(ValueError, match=match):
        _audit(tmp_path, CLAIMS["sequential.npz"])


def test_a_checkpoint_that_is_a_file_is_refused_before_any_draw(tmp_path):
    """It was a FileExistsError at the first save, after the first look's draws."""
    note = tmp_path / "notes.txt"
    note.write_text("notes")
    with pytest.raises(ValueError, match="is a file; give a folder"):
        Looks(max_n=2000, checkpoint=note)
