"""Request parameter classes of /invites and the Invite object of GET /invites."""

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from apps.core.params import Json, Params, one_of
from apps.invites.models import MultiuseInvite
from apps.realms.models import Realm
from apps.users.models import Role

# Zulip's INVITATION_LINK_VALIDITY_MINUTES: 10 days.
DEFAULT_INVITE_EXPIRES_IN_MINUTES = 14400
# The longest lifetime a link may be given: ten years (a link that should outlive that never expires,
# null). Beyond a few thousand years there would be no date to store.
MAX_INVITE_EXPIRES_IN_MINUTES = 10 * 365 * 24 * 60
# The most channels or groups one invitation names.
MAX_IDS = 1000

RoleValue = one_of(*Role.values)
IdList = Annotated[list[int], Field(max_length=MAX_IDS)]
ExpiresInMinutes = Annotated[int, Field(ge=1, le=MAX_INVITE_EXPIRES_IN_MINUTES)]
WelcomeText = Annotated[str, Field(max_length=Realm.MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH)]


class CreateMultiuseInviteParams(Params):
    invite_expires_in_minutes: Json[ExpiresInMinutes | None] = DEFAULT_INVITE_EXPIRES_IN_MINUTES
    invite_as: Json[RoleValue] = Role.MEMBER
    stream_ids: Json[IdList] = Field(default_factory=list)
    group_ids: Json[IdList] = Field(default_factory=list)
    include_realm_default_subscriptions: Json[bool] = False
    welcome_message_custom_text: WelcomeText | None = None


class TestWelcomeMessageParams(Params):
    welcome_message_custom_text: WelcomeText


def _timestamp(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp())


def multiuse_invite_to_dict(invite: MultiuseInvite, *, stream_ids: list[int], group_ids: list[int]) -> dict[str, Any]:
    """Zulip's Invite object for a reusable link, with the channels and groups it gives."""
    return {
        "id": invite.id,
        "invited_by_user_id": invite.referred_by_id,
        "invited": _timestamp(invite.created),
        "expiry_date": _timestamp(invite.expiry_date),
        "invited_as": invite.invited_as,
        "link_url": invite.link_url,
        "is_multiuse": True,
        "stream_ids": stream_ids,
        "group_ids": group_ids,
    }
