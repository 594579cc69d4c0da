"""`manage.py check --deploy` warns of the embedded database and of emails printed to the log (the
operator QA pass: neither was said)."""

from django.core.checks import run_checks
from django.db import connections


def deploy_warnings() -> set[str]:
    return {message.id for message in run_checks(include_deployment_checks=True) if message.id.startswith("parley.")}


def test_emails_printed_to_the_log_are_warned_of(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    assert "parley.W002" in deploy_warnings()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    assert "parley.W002" not in deploy_warnings()


def test_the_embedded_database_is_warned_of():
    assert ("parley.W001" in deploy_warnings()) is (connections["default"].vendor == "sqlite")


def test_plain_http_is_warned_of(settings):
    settings.EXTERNAL_URI_SCHEME = "http://"
    assert "parley.W003" in deploy_warnings()
    settings.EXTERNAL_URI_SCHEME = "https://"
    assert "parley.W003" not in deploy_warnings()
