"""griffe extension for the API pages: Sphinx roles in docstrings as plain code.

The docstrings are Google style but name other objects the Sphinx way (``:func:`rdpjax.audit```,
``:class:`Bound```); Markdown would print the role. This turns each into inline code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|obj|exc|const|py:\w+):`~?([^`]+)`")


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`target``` as ```target``` in every docstring loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called for every object griffe loads."""
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
