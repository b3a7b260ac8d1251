__version__ = "0.1.0"
"""The installed version of flower (distribution `flower-context`)."""
