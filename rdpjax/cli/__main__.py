"""``python -m rdpjax.cli``: the ``rdpjax`` command."""

import sys

from rdpjax.cli import main

sys.exit(main())
