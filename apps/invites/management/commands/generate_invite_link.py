from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.invites.actions.invites import do_create_multiuse_invite
from apps.invites.serializers import DEFAULT_INVITE_EXPIRES_IN_MINUTES
from apps.subscriptions.selectors import streams_by_name
from apps.users.management.utils import ROLE_LABELS, ROLE_NAMES, add_realm_argument, get_realm, print_json


class Command(OperatorCommand):
    help = "Create a reusable invitation link to an organization and print it."

    def add_arguments(self, parser):
        add_realm_argument(parser, required=True)
        parser.add_argument(
            "--as", dest="invited_as", choices=sorted(ROLE_NAMES), default="member", help="the new users' role"
        )
        parser.add_argument("--streams", default="", help='channels the new users join, by name: "general,design"')
        lifetime = parser.add_mutually_exclusive_group()
        lifetime.add_argument(
            "--expires-minutes",
            type=int,
            default=DEFAULT_INVITE_EXPIRES_IN_MINUTES,
            help=f"how long the link works (default {DEFAULT_INVITE_EXPIRES_IN_MINUTES}: 10 days)",
        )
        lifetime.add_argument("--never-expires", action="store_true", help="the link works until it is revoked")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        realm = get_realm(options["realm"])
        names = [name.strip() for name in options["streams"].split(",") if name.strip()]
        found = streams_by_name(realm, names)
        missing = [name for name in names if name.lower() not in found or found[name.lower()].deactivated]
        if missing:
            raise CommandError(f"No channel named {', '.join(missing)} in {realm.url} (see create_stream).")
        try:
            invite = do_create_multiuse_invite(
                realm,
                invited_as=ROLE_NAMES[options["invited_as"]],
                expires_in_minutes=None if options["never_expires"] else options["expires_minutes"],
                streams=list(dict.fromkeys(found[name.lower()] for name in names)),
                acting_user=None,
            )
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        if options["json"]:
            print_json(
                self,
                {
                    "invite_link": invite.link_url,
                    "invite_id": invite.id,
                    "realm": realm.string_id,
                    "invited_as": ROLE_LABELS[invite.invited_as],
                    "expiry_date": invite.expiry_date.isoformat() if invite.expiry_date else None,
                    "stream_ids": sorted(stream.id for stream in invite.streams.all()),
                },
            )
            return
        until = f"valid until {invite.expiry_date:%Y-%m-%d %H:%M} UTC" if invite.expiry_date else "never expires"
        self.stdout.write(f"Invitation to {realm.name} ({realm.url}) as {options['invited_as']}, {until}:")
        self.stdout.write(invite.link_url)
