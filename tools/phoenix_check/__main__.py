"""`python -m tools.phoenix_check --url http://127.0.0.1:6006`: flower's traces in a running Arize Phoenix."""

import sys

from .check import main

sys.exit(main())
