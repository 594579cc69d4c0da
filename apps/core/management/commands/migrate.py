"""Django's migrate, with a database that cannot be reached said in one line as by the other
commands (the first command of an install and of an upgrade: it printed a long traceback). An error
of a migration itself keeps its traceback."""

from django.core.management.base import CommandError
from django.core.management.commands.migrate import Command as DjangoMigrate
from django.db import DatabaseError, connections

from apps.core.commands import unreachable
from apps.core.errors import dependency_of


class Command(DjangoMigrate):
    def handle(self, *args, **options):
        try:
            connections[options["database"]].ensure_connection()
        except DatabaseError as exc:
            if dependency_of(exc) is None:
                raise
            raise CommandError(unreachable(exc)) from None
        return super().handle(*args, **options)
