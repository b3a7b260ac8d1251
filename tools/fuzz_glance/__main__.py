"""`python -m tools.fuzz_glance --cases 5000 --seed 1`: run a fuzz campaign and print its table."""

import sys

from .campaign import main

sys.exit(main())
