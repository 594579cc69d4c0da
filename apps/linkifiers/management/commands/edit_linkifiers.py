from django.core.management.base import CommandError

from apps.core.commands import OperatorCommand
from apps.core.errors import JsonableError
from apps.linkifiers.actions import check_add_linkifier, do_remove_linkifier
from apps.linkifiers.patterns import LinkifierFields
from apps.linkifiers.selectors import access_linkifier_by_id, linkifier_dicts
from apps.users.management.utils import add_realm_argument, get_realm, print_json


class Command(OperatorCommand):
    help = "List, add or remove an organization's linkifiers (patterns that link matching text)."

    def add_arguments(self, parser):
        add_realm_argument(parser, required=True)
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--list", action="store_true", help="list the linkifiers, in the order they apply")
        what.add_argument(
            "--add",
            nargs=2,
            metavar=("PATTERN", "URL_TEMPLATE"),
            help=r"""add one, last: --add '#(?P<id>[0-9]+)' 'https://github.com/org/repo/issues/{id}'""",
        )
        what.add_argument("--remove", type=int, metavar="ID", help="remove the linkifier with this id")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        realm = get_realm(options["realm"])
        try:
            if options["add"]:
                pattern, url_template = options["add"]
                fields = LinkifierFields(pattern=pattern, url_template=url_template)
                linkifier = check_add_linkifier(realm, fields=fields, acting_user=None)
                self._done(options, {"id": linkifier.id}, f"Added linkifier {linkifier.id}: {linkifier}")
            elif options["remove"] is not None:
                linkifier = access_linkifier_by_id(realm, options["remove"])
                do_remove_linkifier(linkifier, acting_user=None)
                self._done(options, {"id": options["remove"]}, f"Removed linkifier {options['remove']}: {linkifier}")
            else:
                self._list(realm, options)
        except JsonableError as exc:
            errors = exc.data.get("errors", {})
            details = [message for messages in errors.values() for message in messages][1:]
            raise CommandError("\n".join([exc.msg, *details])) from None

    def _done(self, options, data: dict, text: str) -> None:
        if options["json"]:
            print_json(self, data)
        else:
            self.stdout.write(text)

    def _list(self, realm, options) -> None:
        linkifiers = linkifier_dicts(realm.id)
        if options["json"]:
            print_json(self, {"linkifiers": linkifiers})
            return
        if not linkifiers:
            self.stdout.write(f"{realm.url} has no linkifiers.")
        for linkifier in linkifiers:
            self.stdout.write(f"{linkifier['id']:>6}  {linkifier['pattern']}  ->  {linkifier['url_template']}")
