"""Sending an email from a background task (apps/core/tasks.py), so that a mail server that is
down, or refuses for now, is tried again later."""

import logging
import smtplib

from django.conf import settings
from django.core.mail import EmailMessage
from django.template import Context
from django.template.loader import get_template

from apps.core.tasks import TemporaryFailure

logger = logging.getLogger("apps.core.mail")


def templated_email(template: str, context: dict, to: str, **options) -> EmailMessage:
    """The email of `<template>.subject.txt` (on one line) and `<template>.txt` rendered with
    `context`, from DEFAULT_FROM_EMAIL to `to`; `options` are EmailMessage's (reply_to, ...)."""
    subject = " ".join(_plain_text(f"{template}.subject.txt", context).split())
    body = _plain_text(f"{template}.txt", context)
    return EmailMessage(subject, body, settings.DEFAULT_FROM_EMAIL, [to], **options)


def _plain_text(template: str, context: dict) -> str:
    """A template rendered as plain text: no HTML escaping (the security QA pass: the subject read
    `Org &quot;&gt;` for an organization named `Org ">`)."""
    return get_template(template).template.render(Context(context, autoescape=False))


def send_or_retry(message: EmailMessage, what: str) -> None:
    """Send `message` (`what` names it in the logs). A mail server that cannot be reached, or that
    refuses the address for now (4xx), raises TemporaryFailure (the task runs again later); an
    address it refuses for good is logged, and the task is done."""
    try:
        message.send()
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        if any(400 <= code < 500 for code in codes):
            raise TemporaryFailure(f"the mail server refused {what} for now: {codes}") from exc
        logger.warning("the mail server refused %s: %s", what, codes)
    except (smtplib.SMTPException, OSError) as exc:
        raise TemporaryFailure(f"could not send {what}: {exc!r}") from exc
