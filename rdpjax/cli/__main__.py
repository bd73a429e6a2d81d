"""``python -m rdpjax.cli``: the ``rdpjax`` command."""

import sys

from rdpjax.cli import console_main

sys.exit(console_main())
