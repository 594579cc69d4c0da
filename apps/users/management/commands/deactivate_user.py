from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.users.actions.activation import do_deactivate_user
from apps.users.errors import LastOwnerDeactivationError
from apps.users.management.utils import add_realm_argument, get_user
from apps.users.selectors import active_bots_owned_by, is_last_owner


class Command(OperatorCommand):
    help = "Deactivate a user and the bots they own. Only a dry run unless --for-real is given."

    def add_arguments(self, parser):
        parser.add_argument("email")
        add_realm_argument(parser, required=False)
        parser.add_argument("-f", "--for-real", action="store_true", help="actually deactivate")

    def handle(self, *args, **options):
        user = get_user(options["email"], options["realm"])
        if not user.is_active:
            raise CommandError(f"{user.delivery_email} is already deactivated.")
        if is_last_owner(user):
            raise CommandError(LastOwnerDeactivationError.MSG)
        bots = active_bots_owned_by(user)
        self.stdout.write(f"User: {user.full_name} <{user.delivery_email}> in {user.realm.url}")
        for bot in bots:
            self.stdout.write(f"  owns bot {bot.full_name} <{bot.delivery_email}>, which will be deactivated too")
        if not options["for_real"]:
            self.stdout.write("Dry run: nothing changed. Pass --for-real to deactivate.")
            return
        try:
            deactivated = do_deactivate_user(user, acting_user=None)
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        self.stdout.write(f"Deactivated {len(deactivated)} account(s).")
