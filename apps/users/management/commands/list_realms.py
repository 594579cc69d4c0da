from django.db.models import Count, Q

from apps.core.commands import OperatorCommand
from apps.realms.models import Realm
from apps.users.management.utils import print_json


class Command(OperatorCommand):
    help = "List the organizations: id, string_id, name, URL, active people and their bots, deactivated."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        active = Q(users__is_active=True)
        realms = Realm.objects.annotate(
            active_users=Count("users", filter=active & Q(users__bot_type__isnull=True)),
            # Its people's bots (the Welcome and Notification Bots, the server's, apart: the hostile QA pass).
            active_bots=Count(
                "users", filter=active & Q(users__bot_type__isnull=False, users__bot_owner__isnull=False)
            ),
        ).order_by("id")
        rows = [
            {
                "id": realm.id,
                "string_id": realm.string_id,
                "name": realm.name,
                "url": realm.url,
                "active_users": realm.active_users,  # people: the bots apart (the ops QA pass)
                "active_bots": realm.active_bots,
                "deactivated": realm.deactivated,
            }
            for realm in realms
        ]
        if options["json"]:
            print_json(self, {"realms": rows})
            return
        self.stdout.write(
            f"{'id':>4}  {'string_id':<20} {'name':<30} {'people':>6} {'bots':>5}  {'url':<40} deactivated"
        )
        for row in rows:
            self.stdout.write(
                f"{row['id']:>4}  {row['string_id'] or '(default)':<20} {row['name']:<30} "
                f"{row['active_users']:>6} {row['active_bots']:>5}  {row['url']:<40} "
                f"{'yes' if row['deactivated'] else 'no'}"
            )
