import time

from django.conf import settings

from apps.core.commands import OperatorCommand
from apps.events.actions import do_sweep_event_queues
from apps.events.backends import get_backend


class Command(OperatorCommand):
    help = (
        "Delete event queues that no client has polled for their lifespan (the server also does this "
        "every EVENT_QUEUE_SWEEP_SECONDS). Their ids then answer BAD_EVENT_QUEUE_ID."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="only print what would be deleted")

    def handle(self, *args, **options):
        if not settings.REDIS_URL:
            self.stdout.write(
                "Embedded mode (no REDIS_URL): queues live inside the server process, which sweeps them itself."
            )
        if options["dry_run"]:
            expired = get_backend().expired_queue_ids(time.time())
            for queue_id in expired:
                self.stdout.write(f"would delete queue {queue_id}")
            self.stdout.write(f"Dry run: {len(expired)} expired queue(s), nothing deleted.")
            return
        removed = do_sweep_event_queues(exclusive=False)
        for queue_id, user_id in removed:
            self.stdout.write(f"deleted queue {queue_id} of user {user_id}")
        self.stdout.write(f"Deleted {len(removed)} expired queue(s).")
