"""Background tasks of invitations: the invitation email, and its reminder two days before the link
expires (Zulip's invitation_reminder, for links valid four days or more), both queued by
apps.invites.actions.email_invitations in the transaction that records the email, and sent by the
task worker (the reminder when its time comes)."""

from apps.core.mail import send_or_retry, templated_email
from apps.core.tasks import retried_task
from apps.invites.models import EmailInvitation

# Attempts while the mail server is down or refuses for now (the waits add up to about 10 minutes).
MAX_ATTEMPTS = 6


@retried_task(max_attempts=MAX_ATTEMPTS)
def send_invitation_email(invitation_id: int) -> None:
    """Email the invitation its link, unless it was used or revoked meanwhile, or its organization
    deactivated (no dead link is sent). A mail server that cannot be reached, or refuses for now
    (4xx), is tried again; an address it refuses for good is logged."""
    invite = _sendable(invitation_id)
    if invite is not None:
        _email(invite, "invites/emails/invitation")


@retried_task(max_attempts=MAX_ATTEMPTS)
def send_invitation_reminder(invitation_id: int, sent_at: str) -> None:
    """The reminder of the email sent at `sent_at`, as send_invitation_email sends it; none when the
    invitation was emailed again since (that email's reminder counts), or can no longer be used."""
    invite = _sendable(invitation_id)
    if invite is not None and invite.last_sent is not None and invite.last_sent.isoformat() == sent_at:
        _email(invite, "invites/emails/invitation_reminder")


def _sendable(invitation_id: int) -> EmailInvitation | None:
    invite = EmailInvitation.objects.select_related("realm", "referred_by").filter(id=invitation_id).first()
    if invite is None or not invite.is_usable or invite.realm.deactivated:
        return None
    return invite


def _email(invite: EmailInvitation, template: str) -> None:
    context = {
        "referrer_name": invite.referred_by.full_name if invite.referred_by else invite.realm.name,
        "referrer_email": invite.referred_by.delivery_email if invite.referred_by else None,
        "realm_name": invite.realm.name,
        "realm_url": invite.realm.url,
        "link": invite.link_url,
        "expiry_date": invite.expiry_date,
    }
    reply_to = [context["referrer_email"]] if context["referrer_email"] else []
    message = templated_email(template, context, invite.email, reply_to=reply_to)
    send_or_retry(message, f"the invitation {invite.id} to {invite.email}")
