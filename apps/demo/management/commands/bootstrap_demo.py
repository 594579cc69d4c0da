import secrets

from django.conf import settings
from django.core.management import call_command
from django.db import transaction

from apps.core.commands import OperatorCommand
from apps.invites.actions.invites import do_create_multiuse_invite
from apps.messages.actions.send import do_send_message
from apps.realms.models import EmailVisibility, Realm
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from apps.subscriptions.models import Stream
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.actions.create_user import do_create_user
from apps.users.actions.user_settings import do_set_user_staff
from apps.users.management.utils import ROLE_LABELS
from apps.users.models import BotType, Role
from apps.users.selectors import api_email

DEMO_USERS = [
    ("Adam Admin", "admin@example.com", Role.ADMINISTRATOR),
    ("Mel Member", "member@example.com", Role.MEMBER),
    ("Gus Guest", "guest@example.com", Role.GUEST),
]


class Command(OperatorCommand):
    help = "On an empty database, create a demo organization and print its users' credentials."

    def add_arguments(self, parser):
        parser.add_argument("--url", default=f"http://127.0.0.1:{settings.PORT}", help="where the server is reached")
        parser.add_argument(
            "--migrate",
            action="store_true",
            help="migrate the database first (`make run`: one process starting Django, not two, so a restart "
            "is ready sooner)",
        )

    def handle(self, *args, **options):
        url = options["url"]
        if options["migrate"]:
            # Its own stream, not this command's wrapper of it: wrapped twice, each "Applying ..." ended
            # its line before its " OK" (the newcomer QA pass: output through a pipe).
            call_command("migrate", interactive=False, verbosity=options["verbosity"], stdout=self.stdout._out)
        if Realm.objects.exists():
            # Said of any database (the operator QA pass: "the demo credentials were printed on the first
            # run" was said where no demo was ever made), with the address to open.
            self.stdout.write(
                f"Database already set up ({Realm.objects.count()} organization(s)); see `manage.py list_realms`.\n"
                f"Sign in at {url}/ (a demo's credentials are printed once, when it is made). A forgotten\n"
                "password is reset from the sign-in page (with no email server set up, the email is in the\n"
                "server's log); `manage.py rotate_api_key EMAIL` gives a new API key."
            )
            return
        dump = settings.VAR_DIR / "parley.jsonl"
        if dump.exists():
            # The README's move to PostgreSQL: its dump is loaded into an empty database (the verify
            # QA pass: a demo made first mixed with it).
            self.stdout.write(
                f"No demo made: {dump} is waiting to be loaded into this empty database. Stop the server, run "
                f"`.venv/bin/python manage.py loaddata {dump}`, then start it again (README: Moving from the "
                "embedded mode to PostgreSQL); or delete the file for a demo."
            )
            return
        password = secrets.token_urlsafe(12)
        with transaction.atomic():
            realm, owner = do_create_realm_with_owner(
                Realm.DEFAULT_STRING_ID,
                "Parley Demo",
                owner_email="owner@example.com",
                owner_full_name="Olivia Owner",
                owner_password=password,
                # A demo shows real addresses; real organizations default to administrators only.
                default_email_address_visibility=EmailVisibility.EVERYONE,
                acting_user=None,
            )
            do_set_user_staff(owner, True, acting_user=None)
            users = [owner] + [
                do_create_user(realm, email, name, role=role, password=password, acting_user=None)
                for name, email, role in DEMO_USERS
            ]
            users.append(
                do_create_user(
                    realm,
                    "demo-bot@example.com",
                    "Demo Bot",
                    bot_type=BotType.GENERIC,
                    bot_owner=owner,
                    acting_user=None,
                )
            )
            # The organization's #general (apps.subscriptions: a default channel, as every new
            # organization's, which its people joined), the bot in it too, with a first message so
            # that clients have something to show.
            general = Stream.objects.get(realm=realm, name="general")
            bulk_add_subscriptions(realm, [general], [users[-1]], acting_user=None)
            do_send_message(owner, stream=general, topic="welcome", content="Welcome to Parley!", acting_user=None)
            # A link for a first colleague: a member, in #general, for the usual 10 days.
            invite = do_create_multiuse_invite(realm, streams=[general], acting_user=owner)
        channels = "the channels #general and #sandbox"
        self.stdout.write(f"\nCreated the demo organization {realm.name!r}, served at {url}, with {channels}\n")
        self.stdout.write(f"{'role':<14} {'email':<24} API key")
        for user in users:
            role = "bot" if user.is_bot else ROLE_LABELS[user.role]
            self.stdout.write(f"{role:<14} {api_email(user):<24} {user.api_key}")
        self.stdout.write(f"\nOpen {url}/ and log in as any of these people with the password: {password}")
        self.stdout.write(f"(The owner's also opens {url}/admin/.)")
        # The link as the server gives it (EXTERNAL_HOST's address: the one a colleague, or a phone,
        # reaches; the newcomer QA pass: it named this machine's loopback address).
        self.stdout.write(f"Invite a colleague (valid 10 days): {invite.link_url}")
        self.stdout.write("\nTry it:")
        self.stdout.write(f"  curl -u {api_email(owner)}:{owner.api_key} {url}/api/v1/users/me")
        self.stdout.write(
            f'  .venv/bin/python -c \'import zulip; print(zulip.Client(email="{api_email(owner)}", '
            f'api_key="{owner.api_key}", site="{url}").get_profile())\'\n'
        )
