"""Parley's `changepassword` (in place of Django's, which looks a user up by an address several
organizations may share: the operator QA pass, MultipleObjectsReturned). Sets a person's password;
their sessions end, as after any change of password."""

import getpass
import sys

from django.contrib.auth.hashers import make_password
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.users.actions.settings import do_change_user_settings
from apps.users.management.utils import add_realm_argument, get_user, read_password_file
from apps.users.models import User


class Command(OperatorCommand):
    help = "Set a person's password (asked twice on a terminal, else read from --password-file)."

    def add_arguments(self, parser):
        parser.add_argument("email")
        add_realm_argument(parser, required=False)
        parser.add_argument("--password-file", help='file whose first line is the password ("-": stdin)')

    def handle(self, *args, **options):
        user = get_user(options["email"], options["realm"])
        if user.is_bot:
            raise CommandError(f"{user.delivery_email} is a bot: bots have no password (see rotate_api_key).")
        password = read_password_file(options["password_file"]) or self._ask()
        if len(password) > User.MAX_PASSWORD_LENGTH:
            raise CommandError(f"The password is too long (limit: {User.MAX_PASSWORD_LENGTH} characters).")
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        do_change_user_settings({user: {}}, new_password_hash=make_password(password), acting_user=None)
        self.stdout.write(f"Password changed for {user.delivery_email} ({user.realm.url}).")

    @staticmethod
    def _ask() -> str:
        if not sys.stdin.isatty():
            raise CommandError("A password is needed: give --password-file (a terminal is asked).")
        password = getpass.getpass("New password: ")
        if password != getpass.getpass("New password (again): "):
            raise CommandError("The passwords do not match.")
        return password
