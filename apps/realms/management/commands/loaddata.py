"""Django's loaddata, refusing a database that already has organizations: a dump is loaded into a
new database (README: Moving from the embedded mode to PostgreSQL). Loaded into one in use, its
rows replace those of the same ids and join the others: a dump loaded after `make run` had made
the demo brought back what had been deleted beside the demo's people (the verify QA pass)."""

from django.core.management.base import CommandError
from django.core.management.commands.loaddata import Command as DjangoLoaddata

from apps.realms.models import Realm


class Command(DjangoLoaddata):
    def handle(self, *fixture_labels, **options):
        realms = Realm.objects.using(options["database"]).count()
        if realms:
            raise CommandError(
                f"The database already has {realms} organization(s): a dump is loaded into a new one only "
                "(rows of the same ids would be replaced, the others kept beside them). Drop it, create it "
                "again, `manage.py migrate`, then load (README: Moving from the embedded mode to PostgreSQL)."
            )
        return super().handle(*fixture_labels, **options)
