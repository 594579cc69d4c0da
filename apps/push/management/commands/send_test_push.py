from django.conf import settings
from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.push.selectors import push_targets
from apps.push.sending import send_test_notification
from apps.users.management.utils import add_realm_argument, get_user, print_json


class Command(OperatorCommand):
    help = (
        "Send a test push notification to every phone a user registered, through the configured push "
        "backend (PUSH_BACKEND): a check of the set-up from end to end."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, metavar="EMAIL", help="whose phones")
        add_realm_argument(parser, required=False)
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        user = get_user(options["user"], options["realm"])
        tokens, devices = push_targets(user)
        if not (tokens or devices):
            raise CommandError(f"{user.delivery_email} has no phone registered for push notifications")
        try:
            sent = send_test_notification(user, tokens, devices)
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        if options["json"]:
            print_json(self, {"user_id": user.id, "tokens": len(tokens), "devices": len(devices), "sent": sent})
            return
        self.stdout.write(
            f"Test notification for {user.delivery_email} sent through {type_name()}: reached {sent} of "
            f"{len(tokens) + len(devices)} registered phone(s)."
        )


def type_name() -> str:
    return settings.PUSH_BACKEND.rsplit(".", 1)[-1]
