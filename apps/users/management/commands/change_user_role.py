from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.users.actions.roles import do_change_user_role
from apps.users.actions.user_settings import do_set_can_change_user_emails, do_set_can_create_users, do_set_user_staff
from apps.users.management.utils import ROLE_LABELS, ROLE_NAMES, add_realm_argument, get_user

# Special permissions and what grants them.
PERMISSIONS = {
    "can_change_user_emails": do_set_can_change_user_emails,
    "can_create_users": do_set_can_create_users,
    "is_staff": do_set_user_staff,
}


class Command(OperatorCommand):
    help = (
        "Change a user's role, or grant (--revoke: remove) a special permission: can_change_user_emails "
        "(owners may change others' emails), can_create_users (administrators may create accounts with "
        "POST /users), is_staff (the server's Django admin, /admin/, for its operators)."
    )

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("new_role", choices=[*sorted(ROLE_NAMES), "admin", *PERMISSIONS])
        add_realm_argument(parser, required=False)
        parser.add_argument("--revoke", action="store_true", help="remove a permission instead of granting it")

    def handle(self, *args, **options):
        user = get_user(options["email"], options["realm"])
        new_role = options["new_role"]
        if new_role in PERMISSIONS:
            if user.is_bot:
                raise CommandError("Bots have no special permissions.")
            grant = not options["revoke"]
            if getattr(user, new_role) == grant:
                raise CommandError(f"User already {'has' if grant else 'lacks'} this permission.")
            PERMISSIONS[new_role](user, grant, acting_user=None)
            self.stdout.write(f"{'Granted' if grant else 'Revoked'} {new_role} for {user.delivery_email}.")
            if new_role == "is_staff" and grant:
                # The operator QA pass: nothing said that this opens every organization's data.
                self.stdout.write(
                    "The Django admin (/admin/) shows and changes every organization of this server, "
                    "direct messages included: it is for the server's operators only."
                )
            return
        if options["revoke"]:
            raise CommandError("--revoke applies to permissions, not roles.")
        role = ROLE_NAMES["administrator" if new_role == "admin" else new_role]
        if user.role == role:
            raise CommandError("User already has this role.")
        old = ROLE_LABELS[user.role]
        try:
            do_change_user_role(user, role, acting_user=None)
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        self.stdout.write(f"Changed the role of {user.delivery_email} from {old} to {new_role}.")
