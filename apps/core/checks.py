"""`manage.py check --deploy`: what a server open to its users should not run with, said before it
does (the operator QA pass: neither was said)."""

from django.conf import settings
from django.core.checks import Tags, Warning, register
from django.db import connections


@register(Tags.database, deploy=True)
def embedded_database(app_configs, **kwargs) -> list[Warning]:
    if connections["default"].vendor != "sqlite":
        return []
    return [
        Warning(
            "The database is the embedded SQLite file (DATABASE_URL is not set, or names SQLite).",
            hint="It serves one server process on one machine; set DATABASE_URL=postgres://... (README: Moving"
            " from the embedded mode to PostgreSQL).",
            id="parley.W001",
        )
    ]


@register(Tags.security, deploy=True)
def emails_printed(app_configs, **kwargs) -> list[Warning]:
    if settings.EMAIL_BACKEND != "django.core.mail.backends.console.EmailBackend":
        return []
    return [
        Warning(
            "Emails are printed to the server's log (EMAIL_URL is not set, or is consolemail://), never sent.",
            hint="Their links (invitations, password resets, new addresses) act as credentials: whoever reads"
            " the log can use them. Set EMAIL_URL=smtp+tls://user:password@smtp.example.com:587.",
            id="parley.W002",
        )
    ]


@register(Tags.security, deploy=True)
def plain_http(app_configs, **kwargs) -> list[Warning]:
    if settings.EXTERNAL_URI_SCHEME == "https://":
        return []
    return [
        Warning(
            "Clients reach the server over plain HTTP (EXTERNAL_HTTPS=false): passwords, API keys and"
            " messages cross the network unencrypted.",
            hint="Only for a trial on a private network; serve HTTPS (a TLS-terminating proxy, TRUST_X_FORWARDED_PROTO)"
            " and set EXTERNAL_HTTPS=true.",
            id="parley.W003",
        )
    ]
