"""Invitations' part of the event system: whether the user may invite people (POST /register)."""

from apps.events.registry import StateContext, initial_state
from apps.groups.events import membership_group_ids
from apps.invites.selectors import can_invite_users_by_email


@initial_state("realm_user")
def invite_permission_state(context: StateContext) -> dict:
    return {"can_invite_others_to_realm": can_invite_users_by_email(context.user, membership_group_ids(context))}
