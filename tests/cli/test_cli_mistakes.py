"""Two dozen mistakes a new user makes on the command line (issue 54): each is one line on
stderr, naming the flag or the file, and exit status 2, before anything is drawn."""

from __future__ import annotations

import numpy as np
import pytest

from rdpjax.cli import main

MECH_PY = """
import numpy as np


def noisy(rng, database, n):
    return float(np.sum(database)) + rng.laplace(0.0, 1.0, size=n)


def wrong_len(rng, database, n):
    return rng.laplace(size=n + 1)
"""

MISTAKES = [
    ("audit gaussian --n abc", "--n"),
    ("audit gaussian --n 0", "--n"),
    ("audit gaussian --n 1.5", "--n"),
    ("audit gaussian --n 1e13", "--n"),
    ("audit gaussian --alpha 2", "--alpha"),
    ("audit gaussian --lam 1", "--lam"),
    ("audit gaussian --lam nan", "--lam"),
    ("audit nosuch", "unknown mechanism"),
    ("audit gaussian --param nope=1", "unknown parameter"),
    ("audit gaussian --param scale=-1", "--param"),
    ("audit gaussian --claim-epsilon -1", "--claim-epsilon"),
    ("audit gaussian --claim-delta 1e-5", "--claim-epsilon"),
    ("audit gaussian --claim-epsilon 1 --claim-zcdp 1", "--claim-zcdp"),
    ("audit gaussian --plot out.txt", "--plot"),
    ("audit gaussian --resume DIR", "--until-refuted"),
    ("audit mech.py:noisy --numpy", "--x"),
    ("audit mech.py:noisy --numpy --x [1]", "--x-prime"),
    ("audit mech.py:noisy --numpy --x [1 --x-prime [0]", "--x"),
    ("audit mech.py:nope --numpy --x [1] --x-prime [0]", "nope"),
    ("audit nofile.py:noisy --numpy --x [1] --x-prime [0]", "nofile.py"),
    ("audit mech.py:wrong_len --numpy --x [1] --x-prime [0] --n 1000", "shape"),
    ("audit mech.py:noisy --numpy --x [1] --x-prime [0] --max-n 1000", "--until-refuted"),
    ("audit mech.py:noisy --numpy --x [1] --x-prime [0] --until-refuted --n 1000", "--n"),
    ("bound p.npy", "Q"),
    ("bound p.npy missing.npy", "missing.npy"),
    ("bound p.npy q.npy --lam 0.5", "order"),
    ("bound few.npy q.npy", "at least 20 outputs a side"),
    ("canaries header.csv", "header"),
    # Found by a hunt of the command line (2026-12-07): each was a traceback and exit 1, or ran
    # on without end (a bandwidth far above the data range), or printed the results first.
    ("bound one.npy q.npy", "one number"),
    ("bound p.npy q.npy --lam 2 --bandwidth 1e300", "bandwidth"),
    ("bound p.npy q.npy --lam 2 --bandwidth 1e10", "bandwidth"),
    ("bound p.npy q.npy --lam 2 --report p.npy", "--report"),
    ("canaries scores.csv --report p.npy", "--report"),
    ("reproduce --n 10", "--n"),  # its progress text was on the error's line
    ("coverage gaussian --n 10", "--n"),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("mistakes")
    (d / "mech.py").write_text(MECH_PY)
    rng = np.random.default_rng(0)
    np.save(d / "p.npy", rng.laplace(size=1000))
    np.save(d / "q.npy", rng.laplace(size=1000))
    np.save(d / "few.npy", rng.laplace(size=10))  # below the fewest a bound is planned for
    (d / "header.csv").write_text("score,bit\n")
    np.save(d / "one.npy", np.array(3.0))  # a 0-d array
    bits = np.arange(200) % 2
    np.savetxt(d / "scores.csv", np.c_[rng.normal(bits), bits], delimiter=",")
    return d


@pytest.mark.parametrize(("line", "named"), MISTAKES)
def test_a_mistake_is_one_line_and_exit_2(folder, monkeypatch, capsys, line, named):
    monkeypatch.chdir(folder)
    try:
        status = main(line.split())
    except SystemExit as exit_:  # the parser's own errors
        status = exit_.code
    out, err = capsys.readouterr()
    assert status == 2 and out == "", (status, out, err)
    assert err.count("\n") == 1 and "error" in err and named in err, err
    assert "Traceback" not in err


def test_a_reader_that_leaves_early_is_no_traceback_and_no_refutation(folder):
    """``rdpjax bound … | head -1``: BrokenPipeError, a traceback, and exit 1 ("refuted")."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "rdpjax.cli", "bound", "p.npy", "q.npy", "--lam", "2"]
    done = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.stdout is not None and done.stderr is not None
    done.stdout.close()  # the reader is gone before the first line
    err = done.stderr.read().decode()
    assert done.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_the_parsers_fewest_outputs_is_the_planners():
    """``--n`` of reproduce and coverage is checked at parse time (no jax) against 20."""
    from rdpjax.cli._types import bound_size
    from rdpjax.estimator.planner import MIN_SAMPLES

    assert bound_size(str(MIN_SAMPLES)) == MIN_SAMPLES
    with pytest.raises(Exception, match=f"≥ {MIN_SAMPLES}"):
        bound_size(str(MIN_SAMPLES - 1))
