"""The newest message a user has received (`max_message_id`), which every GET /users/me and POST
/register ask for.

In plain SQL: compiling the ORM's query cost several times what running it does, the largest
part of GET /users/me once its credentials are cached (benchmarks/scale/README.md). The table name
is the model's; the value is a parameter.
"""

from django.db import connection

from apps.messages.models import UserMessage
from apps.users.models import User

_SQL = f"SELECT message_id FROM {UserMessage._meta.db_table} WHERE user_id = %s ORDER BY message_id DESC LIMIT 1"  # noqa: S608


def max_message_id(user: User) -> int:
    """The id of the newest message the user has; -1 for none."""
    with connection.cursor() as cursor:
        cursor.execute(_SQL, [user.id])
        row = cursor.fetchone()
    return row[0] if row is not None else -1
