"""Edges of the command line (issue 47): unsupported claims, sizes, interruptions, bad outputs.

Each case is a mistake or an interruption that must end as one line on stderr with a set exit
status (2 for input, 130 for Ctrl-C), never a traceback or a silent wrong number.
"""

from __future__ import annotations

import pytest

from rdpjax.cli import main

MECH_PY = """
import numpy as np


def laplace_sum(rng, database, n):
    return np.sum(database) + rng.laplace(0.0, 1.0, size=n)
"""

PAIR = ["--x", "[1]", "--x-prime", "[0]"]


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edges")
    (folder / "mech.py").write_text(MECH_PY)
    return folder


def _exit_code(argv) -> int:
    """main's status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _one_line(capsys) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert captured.out == ""
    return err.strip()


# ----------------------------------------------------------------------------- (ε, δ) claims


@pytest.mark.parametrize("epsilon", [[], ["--claim-epsilon", "1"]])
def test_a_delta_claim_is_refused_saying_what_is_supported(user_dir, capsys, epsilon):
    argv = ["audit", f"{user_dir}/mech.py:laplace_sum", "--numpy", *PAIR, "--n", "1000"]
    assert _exit_code([*argv, *epsilon, "--claim-delta", "1e-5"]) == 2
    err = _one_line(capsys)
    assert err.startswith("rdpjax audit: error: --claim-delta 1e-5: ")
    assert "(ε, δ)-DP claims are not checked yet" in err
    for flag in ("--claim-epsilon", "--claim-zcdp", "--claim-gdp", "--claim-rdp"):
        assert flag in err


def test_bound_refuses_a_delta_claim_too(tmp_path, capsys):
    import numpy as np

    np.save(tmp_path / "p.npy", np.zeros(10))
    argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "p.npy"), "--claim-delta", "0.01"]
    assert _exit_code(argv) == 2
    assert "(ε, δ)-DP claims are not checked yet" in _one_line(capsys)
