"""`manage.py collectstatic_changed` (what `make run` runs at every start): the static files are
collected the first time and again when a source changed, not at a restart where none did
(collectstatic with WhiteNoise's storage took about 5 s each time, the longest step of a restart)."""

import os

import pytest
from django.core.management import call_command


@pytest.fixture
def static(tmp_path, settings):
    """A source directory of its own beside the apps', collected into a directory of its own (by
    Django's plain storage: WhiteNoise's compresses every file, seconds each time)."""
    sources, collected = tmp_path / "sources", tmp_path / "collected"
    sources.mkdir()
    (sources / "extra.css").write_text("body { color: black; }")
    settings.STATICFILES_DIRS = [sources]
    settings.STATIC_ROOT = collected
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": STORAGE}}
    return sources, collected


STORAGE = "django.contrib.staticfiles.storage.StaticFilesStorage"


def test_collects_only_what_changed_since_the_last_time(static):
    sources, collected = static
    call_command("collectstatic_changed", verbosity=0)
    assert (collected / "extra.css").read_text() == "body { color: black; }"
    assert (collected / "web" / "app.js").exists()  # the apps' own files, as collectstatic
    # Nothing changed: nothing collected (a file removed from the collected ones stays away).
    (collected / "extra.css").unlink()
    call_command("collectstatic_changed", verbosity=0)
    assert not (collected / "extra.css").exists()
    # A source changed: collected again.
    (sources / "extra.css").write_text("body { color: navy; }")
    later = os.stat(sources / "extra.css").st_mtime_ns + 10**9
    os.utime(sources / "extra.css", ns=(later, later))
    call_command("collectstatic_changed", verbosity=0)
    assert (collected / "extra.css").read_text() == "body { color: navy; }"


def test_collects_again_when_the_collected_files_are_gone(static, settings):
    """With the server's storage (WhiteNoise's, here over the one source directory only)."""
    _, collected = static
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    call_command("collectstatic_changed", verbosity=0)
    (collected / "staticfiles.json").unlink()  # STATIC_ROOT emptied, say
    call_command("collectstatic_changed", verbosity=0)
    assert (collected / "staticfiles.json").exists()
