from django.db.models import Count, Q

from apps.core.commands import OperatorCommand
from apps.realms.models import Realm
from apps.users.management.utils import print_json


class Command(OperatorCommand):
    help = "List the organizations: id, string_id, name, URL, active users, deactivated."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        realms = Realm.objects.annotate(active_users=Count("users", filter=Q(users__is_active=True))).order_by("id")
        rows = [
            {
                "id": realm.id,
                "string_id": realm.string_id,
                "name": realm.name,
                "url": realm.url,
                "active_users": realm.active_users,
                "deactivated": realm.deactivated,
            }
            for realm in realms
        ]
        if options["json"]:
            print_json(self, {"realms": rows})
            return
        self.stdout.write(f"{'id':>4}  {'string_id':<20} {'name':<30} {'users':>6}  {'url':<40} deactivated")
        for row in rows:
            self.stdout.write(
                f"{row['id']:>4}  {row['string_id'] or '(default)':<20} {row['name']:<30} "
                f"{row['active_users']:>6}  {row['url']:<40} {'yes' if row['deactivated'] else 'no'}"
            )
