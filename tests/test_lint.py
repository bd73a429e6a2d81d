"""The house style's mechanical part, as a gate: ``ruff check`` and ``ruff format --check`` pass on
the package, the tests and the benchmarks (the configuration is pyproject.toml's)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["rdpjax", "tests", "benchmarks"]


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")  # the test extra installs it in the venv
    if beside.exists():
        return [str(beside)]
    if shutil.which("ruff"):
        return ["ruff"]
    pytest.skip("ruff is not installed (pip install 'rdpjax[test]')")


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(command):
    done = subprocess.run([*_ruff(), *command, *TARGETS], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
