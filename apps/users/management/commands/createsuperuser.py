"""Parley's `createsuperuser` (in place of Django's: apps.users comes before django.contrib.auth in
INSTALLED_APPS). Users belong to an organization, so this makes an owner of the default one."""

import getpass
import os
import sys

from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.users.actions.create_realm import do_create_server_administrator
from apps.users.management.utils import print_json, read_password_file, user_summary


class Command(OperatorCommand):
    help = (
        "Create an owner of the default organization who may use the Django admin (the organization "
        "too, when there is none). Without a terminal, give --email and --password-file, or set "
        "DJANGO_SUPERUSER_EMAIL and DJANGO_SUPERUSER_PASSWORD."
    )

    def add_arguments(self, parser):
        parser.add_argument("--email", help="the administrator's email address")
        parser.add_argument("--full-name", default="Server administrator")
        parser.add_argument("--password-file", help='file whose first line is the password ("-": stdin)')
        parser.add_argument(
            "--noinput", "--no-input", action="store_false", dest="interactive", help="ask nothing; fail instead"
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        interactive = options["interactive"]
        email = options["email"] or os.environ.get("DJANGO_SUPERUSER_EMAIL") or self._ask(interactive, "Email: ")
        password = (
            read_password_file(options["password_file"])
            or os.environ.get("DJANGO_SUPERUSER_PASSWORD")
            or self._ask_password(interactive)
        )
        try:
            user = do_create_server_administrator(email, options["full_name"], password, acting_user=None)
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        if options["json"]:
            print_json(self, user_summary(user))
            return
        self.stdout.write(f"Created {user.full_name} <{user.delivery_email}>, an owner of {user.realm.url} and staff.")

    @staticmethod
    def _ask(interactive: bool, prompt: str) -> str:
        if not interactive or not sys.stdin.isatty():  # (no terminal: the verify QA pass, an EOFError)
            raise CommandError(f"{prompt.rstrip(': ')} is needed: give it as an option or in the environment.")
        answer = input(prompt).strip()
        if not answer:
            raise CommandError(f"{prompt.rstrip(': ')} cannot be blank.")
        return answer

    def _ask_password(self, interactive: bool) -> str:
        if not interactive or not sys.stdin.isatty():
            raise CommandError("A password is needed: --password-file or DJANGO_SUPERUSER_PASSWORD.")
        password = getpass.getpass("Password: ")
        if password != getpass.getpass("Password (again): "):
            raise CommandError("The passwords do not match.")
        return password
