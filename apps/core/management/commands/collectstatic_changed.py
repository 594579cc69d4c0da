"""`manage.py collectstatic_changed`: collectstatic, only when the static files changed since it last ran.

`make run` runs it at every start: collectstatic itself compresses and hashes every file again each
time (WhiteNoise's storage), about 5 s, the longest step of a restart; a fingerprint of the sources
(each file's path, size and modification time, as the finders list them) kept beside the collected
files says whether anything changed, in a fraction of a second.
"""

import hashlib
import os
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.finders import get_finders
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.management import call_command
from django.core.management.base import BaseCommand

FINGERPRINT_FILE = ".sources-fingerprint"


def sources_fingerprint() -> str:
    digest = hashlib.sha256(repr((settings.STATIC_URL, settings.STORAGES["staticfiles"])).encode())
    for finder in get_finders():
        for path, storage in sorted(finder.list([]), key=lambda found: found[0]):
            status = os.stat(storage.path(path))
            digest.update(f"{path}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class Command(BaseCommand):
    help = "Collect the static files (collectstatic --noinput) when they changed since the last time."
    requires_system_checks = []  # the migrate beside it at a start runs them

    def handle(self, *args, **options) -> None:
        stamp = Path(settings.STATIC_ROOT) / FINGERPRINT_FILE
        fingerprint = sources_fingerprint()
        manifest = getattr(staticfiles_storage, "manifest_name", None)
        collected = manifest is None or staticfiles_storage.exists(manifest)
        if collected and stamp.exists() and stamp.read_text() == fingerprint:
            return
        call_command("collectstatic", interactive=False, verbosity=options["verbosity"])
        stamp.write_text(fingerprint)
