from datetime import timedelta

from django.core.management.base import CommandError
from django.utils import timezone

from apps.core.commands import OperatorCommand
from apps.uploads.actions import do_delete_attachment
from apps.uploads.selectors import old_unclaimed_attachments


class Command(OperatorCommand):
    help = (
        "Delete uploaded files that no message links and that were uploaded more than --weeks weeks "
        "ago (Zulip's delete_old_unclaimed_attachments). A dry run unless --for-real."
    )

    def add_arguments(self, parser):
        parser.add_argument("--weeks", type=int, default=5, help="age of the files to delete (default 5)")
        parser.add_argument("--for-real", action="store_true", help="delete them (else only list them)")

    def handle(self, *args, **options):
        if options["weeks"] < 0:
            raise CommandError("--weeks must be 0 or more")
        older_than = timezone.now() - timedelta(weeks=options["weeks"])
        attachments = old_unclaimed_attachments(older_than)
        for attachment in attachments:
            verb = "deleting" if options["for_real"] else "would delete"
            self.stdout.write(
                f"{verb} {attachment.path_id} ({attachment.size} bytes, {attachment.owner.delivery_email})"
            )
            if options["for_real"]:
                do_delete_attachment(attachment, acting_user=None)
        if not options["for_real"]:
            self.stdout.write(f"Dry run: {len(attachments)} file(s) to delete; nothing deleted (--for-real).")
        else:
            self.stdout.write(f"Deleted {len(attachments)} file(s).")
