"""Request parameter classes of /bot_storage."""

from apps.core.params import Json, Params


class UpdateStorageParams(Params):
    storage: Json[dict[str, str]]


class StorageKeysParams(Params):
    """GET and DELETE /bot_storage: the keys to read or delete; none (or null) means all, an empty
    list none, as Zulip's."""

    keys: Json[list[str] | None] = None
