from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.users.actions.create_user import do_create_user
from apps.users.management.utils import (
    ROLE_NAMES,
    add_realm_argument,
    get_realm,
    get_user,
    print_json,
    read_password_file,
    user_summary,
)
from apps.users.models import BotType

BOT_TYPES = {
    "generic": BotType.GENERIC,
    "incoming_webhook": BotType.INCOMING_WEBHOOK,
    "outgoing_webhook": BotType.OUTGOING_WEBHOOK,
}  # not embedded bots: Parley runs none (the API's "Embedded bots are not enabled.")


class Command(OperatorCommand):
    help = "Create a user or a bot in an organization; prints its API key."

    def add_arguments(self, parser):
        add_realm_argument(parser, required=True)
        parser.add_argument("--email", required=True)
        parser.add_argument("--full-name", required=True)
        parser.add_argument("--role", choices=sorted(ROLE_NAMES), default="member")
        parser.add_argument("--password-file", help='file whose first line is the password ("-": stdin)')
        parser.add_argument("--bot-type", choices=sorted(BOT_TYPES), help="create a bot of this type")
        parser.add_argument("--bot-owner", help="email of the bot's owner (required for bots)")
        parser.add_argument("--service-url", help="where an outgoing-webhook bot is reached")
        parser.add_argument(
            "--service-name",
            help="an outgoing-webhook bot's service name, its section in zulip-botserver's configuration "
            '(default: the bot\'s short name, its address before "-bot@")',
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        realm = get_realm(options["realm"])
        bot_type = BOT_TYPES.get(options["bot_type"]) if options["bot_type"] else None
        if bot_type is not None and not options["bot_owner"]:
            raise CommandError("--bot-owner is required with --bot-type.")
        if bot_type is None and (options["bot_owner"] or options["service_url"] or options["service_name"]):
            raise CommandError("--bot-owner, --service-url and --service-name need --bot-type.")
        bot_owner = get_user(options["bot_owner"], realm.string_id) if options["bot_owner"] else None
        try:
            user = do_create_user(
                realm,
                options["email"],
                options["full_name"],
                role=ROLE_NAMES[options["role"]],
                password=read_password_file(options["password_file"]),
                bot_type=bot_type,
                bot_owner=bot_owner,
                service_url=options["service_url"],
                service_name=options["service_name"],
                acting_user=None,
            )
        except JsonableError as exc:
            raise CommandError(exc.msg) from None
        summary = user_summary(user)
        service = user.services.first()
        if service is not None:
            summary["service_name"] = service.name
            summary["service_url"] = service.base_url
            summary["service_token"] = service.token
        if options["json"]:
            print_json(self, summary)
            return
        kind = f"{user.get_bot_type_display().lower()} bot" if user.is_bot else summary["role"]
        self.stdout.write(f"Created {kind} {user.full_name} <{summary['email']}> in {realm.url}")
        self.stdout.write(f"API key: {user.api_key}")
