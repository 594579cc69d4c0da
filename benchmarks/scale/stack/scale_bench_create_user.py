"""Times do_create_user in the organization of the benchmark's database, each in a transaction
rolled back (the organization stays as built): `python scale_bench_create_user.py COUNT` prints a
JSON list of seconds. Run by benchmarks/scale/run.py with the measured checkout's Python."""

import json
import sys
import time
import uuid

import django

django.setup()

from django.db import transaction  # noqa: E402

from apps.realms.models import Realm  # noqa: E402
from apps.users.actions.create_user import do_create_user  # noqa: E402


class Rollback(Exception):
    pass


realm = Realm.objects.get(string_id=Realm.DEFAULT_STRING_ID)
timings = []
for _ in range(int(sys.argv[1])):
    email = f"new-{uuid.uuid4().hex[:12]}@scale.example"
    try:
        with transaction.atomic():
            started = time.perf_counter()
            do_create_user(realm, email, "New Person", acting_user=None)
            timings.append(time.perf_counter() - started)
            raise Rollback
    except Rollback:
        pass
print(json.dumps(timings))
