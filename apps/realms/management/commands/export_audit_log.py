import json
from datetime import datetime

from django.core.management.base import CommandError
from django.utils.dateparse import parse_datetime

from apps.core.commands import OperatorCommand
from apps.realms.models import AuditLogEventType
from apps.realms.selectors import audit_log_entries, get_realm
from apps.realms.serializers import audit_log_entry_to_dict


class Command(OperatorCommand):
    help = (
        "Export an organization's audit log, oldest first: one JSON object per line (id, event_time, "
        "event_type, event, acting_user_id, modified_user_id, modified_stream_id, "
        "modified_user_group_id, extra_data)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "-r", "--realm", required=True, help='string_id of the organization; "" is the default organization'
        )
        parser.add_argument("--since", help="only entries at or after this time (ISO 8601, e.g. 2026-11-01T00:00Z)")
        parser.add_argument("--until", help="only entries before this time (ISO 8601)")
        parser.add_argument(
            "--event",
            action="append",
            type=str.upper,  # user_created is USER_CREATED
            choices=[t.name for t in AuditLogEventType],
            metavar="EVENT",
            help="only entries of this kind (USER_ROLE_CHANGED, STREAM_CREATED, ...); may be repeated",
        )

    def handle(self, *args, **options):
        realm = get_realm(options["realm"])
        if realm is None:
            raise CommandError(f"There is no organization with string_id {options['realm']!r} (see list_realms).")
        events = [AuditLogEventType[name] for name in options["event"]] if options["event"] else None
        since, until = _time(options["since"], "--since"), _time(options["until"], "--until")
        if since is not None and until is not None and since >= until:
            raise CommandError("--since must be before --until.")
        entries = audit_log_entries(realm, since=since, until=until, event_types=events)
        for entry in entries.iterator(chunk_size=2000):
            self.stdout.write(json.dumps(audit_log_entry_to_dict(entry)))


def _time(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    value = parse_datetime(text.replace("Z", "+00:00"))
    if value is None or value.tzinfo is None:
        raise CommandError(f"{option} must be an ISO 8601 time with a time zone, e.g. 2026-11-01T00:00Z")
    return value
