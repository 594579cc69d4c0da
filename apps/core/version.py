"""The one place the server's version is written (also read by pyproject.toml)."""

PARLEY_VERSION = "0.1.0"
