"""Fixtures for the core tests (references live in ``references.py``)."""

import os

import pytest

import rdpjax

# Commands the tests start as programs (python -m rdpjax.cli) would otherwise fill the user's
# compilation cache (~/.cache/rdpjax); tests/test_cli_cache.py turns it on where it tests it.
os.environ.setdefault("RDPJAX_NO_CACHE", "1")


@pytest.fixture
def x64():
    """Run a test body inside rdpjax's scoped float64 mode."""
    with rdpjax.float64():
        yield
