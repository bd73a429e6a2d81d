"""Fixtures for the core tests (references live in ``references.py``)."""

import pytest

import rdpjax


@pytest.fixture
def x64():
    """Run a test body inside rdpjax's scoped float64 mode."""
    with rdpjax.float64():
        yield
