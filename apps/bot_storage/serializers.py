"""Request parameter classes of /bot_storage."""

from apps.core.params import Json, Params


class UpdateStorageParams(Params):
    storage: Json[dict[str, str]]


class StorageKeysParams(Params):
    """GET and DELETE /bot_storage: the keys to read or delete; none (or an empty list) means all."""

    keys: Json[list[str]] | None = None
