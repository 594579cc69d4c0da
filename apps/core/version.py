"""The one place the server's name and version are written (the version is also read by pyproject.toml)."""

PARLEY_NAME = "parley"
PARLEY_VERSION = "0.1.0"
