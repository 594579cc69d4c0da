from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.management.utils import print_json, read_password_file, user_summary


class Command(OperatorCommand):
    help = "Create an organization and its first owner; prints the owner's API key."

    def add_arguments(self, parser):
        parser.add_argument(
            "--string-id", required=True, help='subdomain under EXTERNAL_HOST; "" for the default organization'
        )
        parser.add_argument("--name", required=True)
        parser.add_argument("--owner-email", required=True)
        parser.add_argument("--owner-full-name", required=True)
        parser.add_argument("--password-file", help='file whose first line is the owner\'s password ("-": stdin)')
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        try:
            realm, owner = do_create_realm_with_owner(
                options["string_id"],
                options["name"],
                owner_email=options["owner_email"],
                owner_full_name=options["owner_full_name"],
                owner_password=read_password_file(options["password_file"]),
                acting_user=None,
            )
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        summary = {**user_summary(owner), "realm_id": realm.id, "realm_name": realm.name}
        if options["json"]:
            print_json(self, summary)
            return
        self.stdout.write(f"Created organization {realm.name!r} at {realm.url}")
        # The address the owner logs in with (the one given); others see the API address, which the
        # organization's email visibility may hide.
        self.stdout.write(f"Owner: {owner.full_name} <{owner.delivery_email}>  API key: {owner.api_key}")
        if summary["email"] != owner.delivery_email:
            self.stdout.write(f"  (shown to others, and in the API, as {summary['email']})")
        if not options["password_file"]:
            self.stdout.write(
                f"  No password yet: choose one with 'Forgot your password?' on {realm.url}/login/ "
                "(or give --password-file)."
            )
