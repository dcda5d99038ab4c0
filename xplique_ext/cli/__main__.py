"""``python -m xplique_ext.cli``: the ``xplique-ext`` command."""

import sys

from . import main

sys.exit(main())
