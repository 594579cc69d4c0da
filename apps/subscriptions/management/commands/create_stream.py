from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.subscriptions.actions import (
    NewChannel,
    check_description,
    check_stream_name,
    create_streams,
    send_stream_creation,
)
from apps.subscriptions.selectors import get_stream_by_name
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
            name = check_stream_name(options["name"])
            if get_stream_by_name(realm, name) is not None:
                raise CommandError(f"Channel '{name}' already exists")
            [stream] = create_streams(
                realm,
                [NewChannel(name, check_description(options["description"]))],
                invite_only=options["private"],
                acting_user=None,
            )
            send_stream_creation(realm, [stream])
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        if options["json"]:
            print_json(self, {"stream_id": stream.id, "name": stream.name, "realm": realm.string_id})
            return
        self.stdout.write(f"Created channel '{stream.name}' (id {stream.id}) in {realm.url}")
