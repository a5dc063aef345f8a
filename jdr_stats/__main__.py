"""``python -m jdr_stats``: see :mod:`jdr_stats.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
