"""`python -m flower ...`: the `flower` command, as the console script runs it."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
