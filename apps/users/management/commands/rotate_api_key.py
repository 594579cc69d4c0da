from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.users.actions.user_settings import do_regenerate_api_key
from apps.users.management.utils import add_realm_argument, get_user, print_json, user_summary


class Command(OperatorCommand):
    help = "Give a user or bot a new API key; the old key stops working at once."

    def add_arguments(self, parser):
        parser.add_argument("email")
        add_realm_argument(parser, required=False)
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        user = get_user(options["email"], options["realm"])
        if user.is_system_bot:
            # The server writes as it; a key printed here would let anyone holding it do so too (the
            # operator QA pass: a direct message sent as the Welcome Bot).
            why = "the server writes as it, nobody signs in as it."
            raise CommandError(f"{user.delivery_email} is a system bot: {why}")
        do_regenerate_api_key(user, acting_user=None)
        if options["json"]:
            print_json(self, user_summary(user))
            return
        self.stdout.write(f"New API key for {user.delivery_email}: {user.api_key}")
