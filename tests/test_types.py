"""The type check as a gate: pyright's strict mode (basedpyright) passes on what
pyproject.toml's ``[tool.basedpyright]`` includes: the estimator and the helpers it rests on.

One strict rule is off, ``reportUnknownMemberType``: jax annotates parts of its own signatures
with types the checker cannot resolve, so every ``jnp`` call would be reported. Jitted functions
keep their signatures through ``rdpjax._typing.typed_jit``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # basedpyright over the package, in a subprocess

ROOT = Path(__file__).resolve().parent.parent


def test_pyright_strict_on_the_estimator():
    # The test extra installs basedpyright beside this interpreter; a missing checker fails
    # here rather than skipping, so the gate cannot pass unseen.
    checker = Path(sys.executable).with_name("basedpyright")
    assert checker.exists(), "basedpyright is missing: pip install 'rdpjax[test]'"
    done = subprocess.run(
        # -p: this repository's pyproject.toml, never a pyrightconfig.json in a folder above it
        [str(checker), "-p", str(ROOT), "--pythonpath", sys.executable],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 errors" in done.stdout, done.stdout[-2000:]
