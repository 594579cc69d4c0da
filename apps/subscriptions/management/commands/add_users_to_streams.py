from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from apps.subscriptions.selectors import streams_by_name
from apps.users.management.utils import add_realm_argument, get_realm
from apps.users.models import User


class Command(OperatorCommand):
    help = "Subscribe users to channels (Zulip's command of the same name)."

    def add_arguments(self, parser):
        add_realm_argument(parser, required=True)
        parser.add_argument("-s", "--streams", required=True, help="comma-separated channel names")
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("-u", "--users", help="comma-separated emails")
        who.add_argument("-a", "--all-users", action="store_true", help="every active user and bot of the organization")

    def handle(self, *args, **options):
        realm = get_realm(options["realm"])
        names = [name.strip() for name in options["streams"].split(",") if name.strip()]
        if not names:
            raise CommandError("--streams names no channel.")
        found = streams_by_name(realm, names)
        missing = [name for name in names if name.lower() not in found or found[name.lower()].deactivated]
        if missing:
            raise CommandError(f"No such channel: {', '.join(missing)} (see create_stream).")
        # Never the server's own bots (the Welcome Bot, the Notification Bot), which subscribe to nothing.
        users = User.objects.filter(realm=realm, is_active=True).exclude(User.SYSTEM_BOTS).order_by("id")
        if not options["all_users"]:
            emails = [email.strip().lower() for email in options["users"].split(",") if email.strip()]
            if not emails:
                raise CommandError("--users names nobody (--all-users is everyone).")
            users = [u for u in users if u.delivery_email.lower() in emails]
            unknown = set(emails) - {u.delivery_email.lower() for u in users}
            if unknown:
                raise CommandError(f"No active user with email: {', '.join(sorted(unknown))}")
        streams = [found[name.lower()] for name in dict.fromkeys(names)]
        subscribed, already = bulk_add_subscriptions(realm, streams, list(users), acting_user=None)
        for change in subscribed:
            self.stdout.write(f"{change.user.delivery_email} subscribed to {change.stream.name}")
        for change in already:
            self.stdout.write(f"{change.user.delivery_email} was already subscribed to {change.stream.name}")
