"""Reads of the directory: an organization's active users, by their public `uuid`."""

from uuid import UUID

from django.db.models import Q, QuerySet

from apps.users.access import accessible_user_ids
from apps.users.models import User

# (uuid, full name): all the directory shows of a user.
DirectoryUser = tuple[UUID, str]


def directory_users(viewer: User) -> QuerySet[User]:
    """The users the directory lists to `viewer`: their organization's active people and bots, as
    GET /api/v1/users lists them (not the server's own bots, the Welcome and Notification Bots),
    and none of the people it hides from them (a guest where the organization limits what guests
    see: the directory QA pass found every hidden person listed with their name; GET
    /api/v1/users shows such people as unknown users, and the directory, which has only names to
    show, leaves them out)."""
    users = User.objects.filter(realm_id=viewer.realm_id, is_active=True).exclude(User.SYSTEM_BOTS)
    seen = accessible_user_ids(viewer)
    return users if seen is None else users.filter(Q(id__in=seen) | Q(bot_type__isnull=False))


def users_after(users: QuerySet[User], after: UUID | None, count: int) -> list[DirectoryUser]:
    """Up to `count` of `users` in `uuid` order, starting after `after`: one range of the
    (realm, uuid) index of active users (users_user_directory)."""
    if after is not None:
        users = users.filter(uuid__gt=after)
    return list(users.order_by("uuid").values_list("uuid", "full_name")[:count])


def get_directory_user(viewer: User, user_uuid: UUID) -> DirectoryUser | None:
    return directory_users(viewer).filter(uuid=user_uuid).values_list("uuid", "full_name").first()
