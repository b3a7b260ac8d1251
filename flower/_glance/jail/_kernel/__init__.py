"""The kernel side of the glance jail: standard library and ctypes only.

This package is imported two ways: as part of flower (for the availability probe), and as a top-level
package by the launcher script (`python -I -S run.py ...`), which runs before any site-packages exist.
So nothing here may import flower or a third-party package, and imports between these modules are
relative.
"""
