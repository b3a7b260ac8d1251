"""A check of flower's tracing against a real Arize Phoenix (docs/tracing.md, Checked against Phoenix)."""
