"""Reads of the directory: an organization's active users, by their public `uuid`."""

from uuid import UUID

from django.db.models import QuerySet

from apps.realms.models import Realm
from apps.users.models import User

# (uuid, full name): all the directory shows of a user.
DirectoryUser = tuple[UUID, str]


def directory_users(realm: Realm) -> QuerySet[User]:
    """The users the directory lists: the organization's active people and bots, as GET
    /api/v1/users lists them (not the server's own bots, the Welcome and Notification Bots)."""
    return User.objects.filter(realm=realm, is_active=True).exclude(User.SYSTEM_BOTS)


def users_after(users: QuerySet[User], after: UUID | None, count: int) -> list[DirectoryUser]:
    """Up to `count` of `users` in `uuid` order, starting after `after`: one range of the
    (realm, uuid) index of active users (users_user_directory)."""
    if after is not None:
        users = users.filter(uuid__gt=after)
    return list(users.order_by("uuid").values_list("uuid", "full_name")[:count])


def get_directory_user(realm: Realm, user_uuid: UUID) -> DirectoryUser | None:
    return directory_users(realm).filter(uuid=user_uuid).values_list("uuid", "full_name").first()
