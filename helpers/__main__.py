"""``python -m helpers``: see :mod:`helpers.cli`."""

import sys

from .cli import main

sys.exit(main())
