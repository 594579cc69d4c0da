#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys
from pathlib import Path


def main() -> None:
    from config.env import ConfigurationError, read_dot_env

    # `.env` first, as the server reads it (config/gunicorn.py): DJANGO_SETTINGS_MODULE there counts
    # too (the operator QA pass: commands ran with the base settings, and printed http:// links).
    read_dot_env(Path(__file__).resolve().parent)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ConfigurationError as exc:
        sys.exit(f"Configuration error: {exc}")
    except ModuleNotFoundError as exc:
        if exc.name is None or not os.environ["DJANGO_SETTINGS_MODULE"].startswith(exc.name):
            raise
        sys.exit(f"Configuration error: DJANGO_SETTINGS_MODULE: {exc}")


if __name__ == "__main__":
    main()
