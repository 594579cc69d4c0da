"""Request parameter classes of /invites and the Invite object of GET /invites."""

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from apps.core.params import Json, Params, one_of
from apps.invites.models import EmailInvitation, Invitation, MultiuseInvite
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


class InviteUsersParams(Params):
    """POST /invites: Zulip requires the addresses and the channels (an empty list for none)."""

    invitee_emails: str
    stream_ids: Json[IdList]
    invite_expires_in_minutes: Json[ExpiresInMinutes | None] = DEFAULT_INVITE_EXPIRES_IN_MINUTES
    invite_as: Json[RoleValue] = Role.MEMBER
    group_ids: Json[IdList] = Field(default_factory=list)
    include_realm_default_subscriptions: Json[bool] = False
    notify_referrer_on_join: Json[bool] = True
    welcome_message_custom_text: WelcomeText | None = None


class TestWelcomeMessageParams(Params):
    welcome_message_custom_text: WelcomeText


def _timestamp(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp())


def _invite_to_dict(invite: Invitation, *, stream_ids: list[int], group_ids: list[int]) -> dict[str, Any]:
    """The fields of Zulip's Invite object both kinds have, with the channels and groups it gives."""
    return {
        "id": invite.id,
        "invited_by_user_id": invite.referred_by_id,
        "invited": _timestamp(invite.created),
        "expiry_date": _timestamp(invite.expiry_date),
        "invited_as": invite.invited_as,
        "stream_ids": stream_ids,
        "group_ids": group_ids,
    }


def multiuse_invite_to_dict(invite: MultiuseInvite, *, stream_ids: list[int], group_ids: list[int]) -> dict[str, Any]:
    """Zulip's Invite object for a reusable link."""
    answer = _invite_to_dict(invite, stream_ids=stream_ids, group_ids=group_ids)
    return {**answer, "link_url": invite.link_url, "is_multiuse": True}


def email_invitation_to_dict(invite: EmailInvitation, *, stream_ids: list[int], group_ids: list[int]) -> dict[str, Any]:
    """Zulip's Invite object for an invitation sent by email."""
    answer = _invite_to_dict(invite, stream_ids=stream_ids, group_ids=group_ids)
    return {
        **answer,
        "email": invite.email,
        "notify_referrer_on_join": invite.notify_referrer_on_join,
        "is_multiuse": False,
    }
