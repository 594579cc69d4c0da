import json

from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.core.params import parse_param_source
from apps.users.actions.settings import check_update_settings_of_users
from apps.users.management.utils import add_realm_argument, get_realm, get_user, print_json
from apps.users.selectors import active_humans_among
from apps.users.serializers import UpdateSettingsParams, given_settings
from apps.users.settings_models import USER_SETTINGS


class Command(OperatorCommand):
    help = (
        "Change a user setting (one of PATCH /settings') for people of an organization: those given with "
        "--users, else all its active people. The value is written as the API takes it: true/false, a "
        "number, or text (e.g. --setting emojiset --value text)."
    )

    def add_arguments(self, parser):
        add_realm_argument(parser, required=True)
        parser.add_argument("--setting", required=True, help="the setting's name, e.g. twenty_four_hour_time")
        parser.add_argument("--value", required=True, help="its new value, e.g. true, 2 or google")
        parser.add_argument("--users", nargs="+", metavar="EMAIL", help="only these people (default: all)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        realm = get_realm(options["realm"])
        name = options["setting"]
        if name not in USER_SETTINGS:
            raise CommandError(f"Unknown setting {name!r}; the settings are those of PATCH /settings.")
        try:
            changes = given_settings(parse_param_source(UpdateSettingsParams, {name: options["value"]}))
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        if options["users"]:
            users = [get_user(email, options["realm"]) for email in options["users"]]
            bots = [user.delivery_email for user in users if user.is_bot]
            if bots:
                raise CommandError(f"Bots have no settings: {', '.join(bots)}.")
        else:
            users = active_humans_among(realm)
        try:
            changed = check_update_settings_of_users(users, changes, acting_user=None)
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        if options["json"]:
            print_json(self, {"setting": name, "value": changes[name], "changed": sorted(user.id for user in changed)})
            return
        value = json.dumps(changes[name])  # as the API and --json write it: true, not True
        self.stdout.write(f"{name} is now {value} for {len(users)} user(s) of {realm.url} ({len(changed)} changed).")
