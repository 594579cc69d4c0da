"""The directory API's wire shapes: User, UserResultsPage and VersionInfo of its OpenAPI document."""

from typing import Any

from apps.core.version import PARLEY_NAME, PARLEY_VERSION
from apps.directory.selectors import DirectoryUser


def directory_user_to_dict(user: DirectoryUser) -> dict[str, Any]:
    user_uuid, full_name = user
    return {"id": str(user_uuid), "name": full_name}


def user_page_to_dict(users: list[DirectoryUser], next_page: str | None) -> dict[str, Any]:
    return {"items": [directory_user_to_dict(user) for user in users], "next_page": next_page}


def version_to_dict() -> dict[str, str]:
    """The running server's name and version: the version GET /api/v1/server_settings reports."""
    return {"name": PARLEY_NAME, "version": PARLEY_VERSION}
