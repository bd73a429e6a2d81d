"""The ``rdpjax`` program's persistent compilation cache: where, when off, and that it fills."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rdpjax.compilation_cache import cache_dir, enable_compilation_cache


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("RDPJAX_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "rdpjax" / "jax"
    monkeypatch.setenv("RDPJAX_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


@pytest.mark.parametrize("value", ["1", "yes"])
def test_cache_off(monkeypatch, tmp_path, value):
    monkeypatch.setenv("RDPJAX_NO_CACHE", value)
    monkeypatch.setenv("RDPJAX_CACHE_DIR", str(tmp_path / "c"))
    assert enable_compilation_cache() is None and not (tmp_path / "c").exists()


def test_the_users_jax_cache_is_left_alone(monkeypatch, tmp_path):
    import jax

    monkeypatch.delenv("RDPJAX_NO_CACHE", raising=False)
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "theirs"))
    before = jax.config.jax_compilation_cache_max_size
    assert enable_compilation_cache() == tmp_path / "theirs"
    assert jax.config.jax_compilation_cache_max_size == before


def _bound(tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    rng = np.random.default_rng(0)
    np.save(tmp_path / "p.npy", 1.0 + rng.standard_normal(2000))
    np.save(tmp_path / "q.npy", rng.standard_normal(2000))
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMP", "RDPJAX_"))}
    argv = ["bound", str(tmp_path / "p.npy"), str(tmp_path / "q.npy"), "--lam", "2"]
    return subprocess.run(
        [sys.executable, "-m", "rdpjax.cli", *argv], env={**clean, **env}, capture_output=True
    )


@pytest.mark.slow
def test_the_program_fills_its_cache_and_not_when_off(tmp_path):
    on = _bound(tmp_path, {"RDPJAX_CACHE_DIR": str(tmp_path / "on")})
    assert on.returncode == 0, on.stderr.decode()
    assert any(p.name.endswith("-cache") for p in (tmp_path / "on").iterdir())
    warm = _bound(tmp_path, {"RDPJAX_CACHE_DIR": str(tmp_path / "on")})  # the kept programs
    assert warm.returncode == 0 and warm.stdout == on.stdout
    off = _bound(tmp_path, {"RDPJAX_CACHE_DIR": str(tmp_path / "off"), "RDPJAX_NO_CACHE": "1"})
    assert off.returncode == 0 and off.stdout == on.stdout  # same numbers either way
    assert not (tmp_path / "off").exists()
