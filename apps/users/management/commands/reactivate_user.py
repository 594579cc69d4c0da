from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.users.actions.activation import do_reactivate_user
from apps.users.management.utils import add_realm_argument, get_user


class Command(OperatorCommand):
    help = "Reactivate a deactivated user or bot."

    def add_arguments(self, parser):
        parser.add_argument("email")
        add_realm_argument(parser, required=False)

    def handle(self, *args, **options):
        user = get_user(options["email"], options["realm"])
        if user.is_active:
            raise CommandError(f"{user.delivery_email} is already active.")
        do_reactivate_user(user, acting_user=None)
        self.stdout.write(f"Reactivated {user.full_name} <{user.delivery_email}>.")
