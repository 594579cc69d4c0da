from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.subscriptions.actions.channels import do_create_stream
from apps.users.management.utils import add_realm_argument, get_realm, print_json


class Command(OperatorCommand):
    # Operators are bound by neither the organization's channel-creation policy nor its rate limit
    # (as with Zulip's create_stream command).
    help = "Create a channel (with no subscribers; see add_users_to_streams)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        add_realm_argument(parser, required=True)
        parser.add_argument("--description", default="")
        parser.add_argument("--private", action="store_true", help="invite-only, history for subscribers only")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        realm = get_realm(options["realm"])
        try:
            stream = do_create_stream(
                realm,
                options["name"],
                description=options["description"],
                invite_only=options["private"],
                acting_user=None,
            )
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        if options["json"]:
            print_json(self, {"stream_id": stream.id, "name": stream.name, "realm": realm.string_id})
            return
        self.stdout.write(f"Created channel '{stream.name}' (id {stream.id}) in {realm.url}")
