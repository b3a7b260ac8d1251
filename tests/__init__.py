"""flower's test suite: the map of the tree and its rules are in `tests/README.md`."""

import pytest

# Helper modules that assert rewrite their asserts as a test module does, so that a failure shows the values.
pytest.register_assert_rewrite(
    "tests.e2e.file_modes",
    "tests.e2e.spill_pointers",
    "tests.example_runs",
    "tests.glance.machine",
    "tests.spill.calls",
)
