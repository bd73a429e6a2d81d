"""What ``import rdpjax`` gives a user: the exported names, and the submodules on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import rdpjax


def test_every_exported_name_exists():
    for name in rdpjax.__all__:
        assert getattr(rdpjax, name) is not None, name


def test_submodules_load_on_first_use_and_unknown_names_raise():
    code = (
        "import sys, rdpjax; assert 'rdpjax.search' not in sys.modules; "
        "rdpjax.stream.streamed_bound; rdpjax.search.find_pair; rdpjax.studies.coverage; "
        "rdpjax.blackbox.blackbox_bound; rdpjax.plots.plot_bound_vs_lambda; "
        "assert 'rdpjax.search' in sys.modules and 'stream' in dir(rdpjax)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        rdpjax.nonexistent  # noqa: B018
