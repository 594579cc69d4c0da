"""What the operator commands share: finding organizations and users, reading secrets, printing."""

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from apps.realms import selectors as realms
from apps.realms.models import Realm
from apps.users.models import Role, User
from apps.users.selectors import api_email, users_with_email

ROLE_NAMES = {
    "owner": Role.OWNER,
    "administrator": Role.ADMINISTRATOR,
    "moderator": Role.MODERATOR,
    "member": Role.MEMBER,
    "guest": Role.GUEST,
}
ROLE_LABELS = {value: name for name, value in ROLE_NAMES.items()}


def add_realm_argument(parser: CommandParser, *, required: bool) -> None:
    parser.add_argument(
        "-r",
        "--realm",
        required=required,
        help='string_id (subdomain) of the organization; "" is the default organization',
    )


def get_realm(string_id: str) -> Realm:
    realm = realms.get_realm(string_id)
    if realm is None:
        raise CommandError(f"There is no organization with string_id {string_id!r} (see list_realms).")
    return realm


def get_user(email: str, realm_string_id: str | None) -> User:
    """The user with this delivery or API email, in the given organization or the only one that has it."""
    realm = get_realm(realm_string_id) if realm_string_id is not None else None
    found = users_with_email(email, realm)
    if not found:
        where = f" in organization {realm_string_id!r}" if realm is not None else ""
        raise CommandError(f"No user with email {email}{where}.")
    if len(found) > 1:
        raise CommandError(f"Several organizations have a user {email}; pass --realm.")
    return found[0]


def read_password_file(path: str | None) -> str | None:
    """The first line of the file ("-" reads standard input); passwords never go on the command line."""
    if path is None:
        return None
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:  # (the operator QA pass: tracebacks)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise CommandError(f"The password file {path} cannot be read: {reason}.") from None
    password = text.splitlines()[0] if text else ""
    if not password:
        raise CommandError("The password file is empty.")
    return password


def user_summary(user: User) -> dict[str, Any]:
    return {
        "user_id": user.id,
        "email": api_email(user),
        "delivery_email": user.delivery_email,
        "full_name": user.full_name,
        "role": ROLE_LABELS[user.role],
        "is_bot": user.is_bot,
        "api_key": user.api_key,
        "realm": user.realm.string_id,
        "realm_url": user.realm.url,
    }


def print_json(command, data: dict[str, Any]) -> None:
    command.stdout.write(json.dumps(data))
