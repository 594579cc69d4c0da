"""Which addresses may join an organization (Zulip's email_allowed_for_realm): where it restricts
addresses to its domains, an address of one of them (or of a subdomain, where the domain allows
them) without "+"; elsewhere any address, but a disposable one where the organization refuses them
(the `disposable-email-domains` list, as Zulip's). Callers word the refusal as Zulip words it where
they are (sign-up page, invitations and email changes, administrators' POST /users)."""

import re
from enum import Enum

from disposable_email_domains import blocklist

from apps.core.errors import JsonableError
from apps.realms.models import Realm, RealmDomain

_LABEL = re.compile(r"^[a-z0-9-]*$")
# Domains Zulip takes off the disposable list (services that forward to a real address).
_NOT_DISPOSABLE = frozenset({"airsi.de", "opayq.com", "abinemail.com", "blurmail.net", "maskmemail.com"})


class EmailRefusal(Enum):
    DOMAIN = "domain"  # not of an allowed domain
    DISPOSABLE = "disposable"
    PLUS = "plus"  # a "+" where addresses are restricted to domains


def check_domain(domain: str) -> str:
    """The domain stripped and lower-cased, or Zulip's "Invalid domain: ..." (validate_domain)."""
    domain = domain.strip().lower()
    problem = _domain_problem(domain)
    if problem is None and len(domain) > RealmDomain.MAX_DOMAIN_LENGTH:
        problem = "Domain is too long"
    if problem is not None:
        raise JsonableError(f"Invalid domain: {problem}")
    return domain


def _domain_problem(domain: str) -> str | None:
    if not domain:
        return "Domain can't be empty."
    if "." not in domain:
        return "Domain must have at least one dot (.)"
    if len(domain) > 255:
        return "Domain is too long"
    if domain.startswith(".") or domain.endswith("."):
        return "Domain cannot start or end with a dot (.)"
    for label in domain.split("."):
        if not label:
            return "Consecutive '.' are not allowed."
        if label.startswith("-") or label.endswith("-"):
            return "Subdomains cannot start or end with a '-'."
        if not _LABEL.match(label):
            return "Domain can only have letters, numbers, '.' and '-'s."
    return None


def email_refusal(realm: Realm, email: str) -> EmailRefusal | None:
    """Why `email` (a valid address) may not join the organization, or None."""
    local, _, domain = email.rpartition("@")
    domain = domain.lower()
    if not realm.emails_restricted_to_domains:
        if realm.disallow_disposable_email_addresses and domain in blocklist and domain not in _NOT_DISPOSABLE:
            return EmailRefusal.DISPOSABLE
        return None
    if "+" in local:
        return EmailRefusal.PLUS
    allowed = dict(RealmDomain.objects.filter(realm=realm).values_list("domain", "allow_subdomains"))
    if domain in allowed:
        return None
    parent = domain
    while "." in parent:
        parent = parent.split(".", 1)[1]
        if allowed.get(parent):
            return None
    return EmailRefusal.DOMAIN


# Zulip's words for a refused address where a person invites, or changes their own address
# (validate_email_is_valid).
INVITE_REFUSALS = {
    EmailRefusal.DOMAIN: "Outside your domain.",
    EmailRefusal.DISPOSABLE: "Please use your real email address.",
    EmailRefusal.PLUS: "Email addresses containing + are not allowed.",
}


# ... to a person signing up (through an invitation link).
SIGNUP_REFUSALS = {
    EmailRefusal.DOMAIN: (
        "Your email address, {email}, is not in one of the domains that are allowed to register for accounts in "
        "this organization."
    ),
    EmailRefusal.DISPOSABLE: "Please use your real email address.",
    EmailRefusal.PLUS: "Email addresses containing + are not allowed in this organization.",
}
# ... to an administrator creating an account (POST /users).
ADMIN_REFUSALS = {
    EmailRefusal.DOMAIN: "Email '{email}' not allowed in this organization",
    EmailRefusal.DISPOSABLE: "Disposable email addresses are not allowed in this organization",
    EmailRefusal.PLUS: "Email addresses containing + are not allowed.",
}


def check_email_allowed(realm: Realm, email: str, words: dict[EmailRefusal, str] = INVITE_REFUSALS) -> None:
    """Refuse (JsonableError, in `words`) an address that may not join the organization."""
    refusal = email_refusal(realm, email)
    if refusal is not None:
        raise JsonableError(words[refusal].format(email=email))
