"""The typed settings of the looks (rdpjax.auditing.sequential.setup.LookSetup) and their JSON."""

import dataclasses
import json

import numpy as np
import pytest

from rdpjax.auditing.sequential.setup import LookSetup
from rdpjax.auditing.sequential.state import State, load_state, save_state


def _continuous() -> LookSetup:
    return LookSetup(
        kind="continuous",
        floor=[0.01, 0.005],
        beta=[0.5, 0.5],
        dim=1,
        shape=[256],
        pad=[32],
        low=[-3.0],
        spacing=[0.05],
        bandwidth=[[0.4], [0.2]],
    )


def _state(setup: LookSetup) -> State:
    return State(
        fingerprint={"audit": "test"},
        setup=setup,
        counts=[np.zeros(3), np.ones(3)],
        outside=[0.0, 0.0],
        drawn=[3, 3],
        pieces=[1, 1],
        rng=None,
        pilot=64,
    )


@pytest.mark.parametrize(
    "setup",
    [
        _continuous(),
        LookSetup(kind="discrete", floor=[0.1], beta=[0.5], codes=7),
        LookSetup(kind="discrete", floor=[0.1], beta=[0.5], values=[-3, 2**30, 5]),
        LookSetup(kind="discrete", floor=[0.1], beta=[0.5], rows=[[0, 1], [1, 0]]),
    ],
)
def test_a_checkpoint_gives_back_the_setup_it_saved(tmp_path, setup):
    save_state(_state(setup), tmp_path)
    loaded = load_state(tmp_path, {"audit": "test"})
    assert isinstance(loaded.setup, LookSetup)
    assert loaded.setup == setup
    np.testing.assert_array_equal(loaded.counts[1], np.ones(3))


def test_a_record_without_the_optional_tables_is_a_setup_with_none():
    # What a discrete audit wrote before any table was needed: kind, floors and βs only.
    setup = LookSetup.from_json({"kind": "discrete", "floor": [0.2], "beta": [0.5]})
    assert setup.discrete and setup.values is None and setup.rows is None and setup.codes == 0


def test_bad_setups_are_value_errors():
    with pytest.raises(ValueError, match="kind must be one of"):
        LookSetup(kind="binned", floor=[0.1], beta=[0.5])
    record = dataclasses.asdict(_continuous()) | {"grid": [1]}
    with pytest.raises(ValueError, match="no field grid"):
        LookSetup.from_json(record)


def test_a_checkpoint_with_a_broken_setup_is_named(tmp_path):
    save_state(_state(_continuous()), tmp_path)
    path = tmp_path / "sequential.npz"
    with np.load(path) as data:
        record = json.loads(str(data["state"]))
        arrays = {k: np.array(data[k]) for k in ("counts_p", "counts_q")}
    record["setup"]["kind"] = "binned"
    np.savez(path, state=np.asarray(json.dumps(record)), **arrays)
    with pytest.raises(ValueError, match="cannot read the checkpoint .*look setup"):
        load_state(tmp_path, {"audit": "test"})
