"""User groups' part of the event system: the `realm_user_groups` initial state, and how a group's
(de)activation reaches queues with and without the `include_deactivated_groups` capability."""

from apps.events.registry import QueueOptions, StateContext, event_transform, initial_state
from apps.groups.models import REALM_SETTINGS, SystemGroups
from apps.groups.selectors import (
    groups_by_id,
    recursive_membership_group_ids,
    setting_values_for_api,
    user_groups_in_realm_serialized,
)

# Zulip's deprecated realm_wildcard_mention_policy, a superset of can_mention_many_users_group:
# the policy of its system group, else everyone (Zulip's get_corresponding_policy_value_for_group_setting).
WILDCARD_MENTION_POLICY_OF_GROUP = {
    SystemGroups.EVERYONE: 1,
    SystemGroups.MEMBERS: 2,
    SystemGroups.FULL_MEMBERS: 3,
    SystemGroups.ADMINISTRATORS: 5,
    SystemGroups.NOBODY: 6,
    SystemGroups.MODERATORS: 7,
}


def membership_group_ids(context: StateContext) -> set[int]:
    """The groups the registering user is in (through subgroups too): read once per register, for
    the fetchers of the apps above that ask what the user may do."""
    return context.once("membership_group_ids", lambda: recursive_membership_group_ids(context.user))


def _wants_deactivated_groups(options: QueueOptions) -> bool:
    return bool(options.client_capabilities.get("include_deactivated_groups"))


@initial_state("realm_user_groups")
def realm_user_groups_state(context: StateContext) -> dict:
    """Named groups (deactivated ones only for clients that declared `include_deactivated_groups`);
    three queries, however many groups and members."""
    include_deactivated = _wants_deactivated_groups(context.options)
    return {
        "realm_user_groups": user_groups_in_realm_serialized(
            context.user.realm, include_deactivated=include_deactivated
        )
    }


@initial_state("realm")
def realm_group_settings_state(context: StateContext) -> dict:
    """The organization's group settings (`realm_can_create_public_channel_group`, ...), beside the
    rest of the "realm" state (apps.realms)."""
    realm = context.user.realm
    group_ids = [getattr(realm, f"{name}_id") for name in REALM_SETTINGS]
    groups = groups_by_id(realm.id, group_ids)
    values = setting_values_for_api(realm.id, group_ids, groups=groups.values())
    mention_group = groups[realm.can_mention_many_users_group_id]
    return {
        **{f"realm_{name}": values[getattr(realm, f"{name}_id")] for name in REALM_SETTINGS},
        "realm_wildcard_mention_policy": WILDCARD_MENTION_POLICY_OF_GROUP.get(
            mention_group.name if mention_group.is_system_group else None, 1
        ),
    }


@event_transform("user_group")
def user_group_for_queue(event: dict, options: QueueOptions) -> dict:
    """A deactivation is sent as update {deactivated: true} and a reactivation as add (the group);
    clients that do not keep deactivated groups get remove instead of the first, and clients that
    keep them get update {deactivated: false} instead of the second."""
    keeps_deactivated = _wants_deactivated_groups(options)
    queued = {key: event[key] for key in ("id", "type") if key in event}  # the queue's numbering stays
    if event["op"] == "update" and event["data"].get("deactivated") is True and not keeps_deactivated:
        return {**queued, "op": "remove", "group_id": event["group_id"]}
    if event["op"] == "add" and event.get("for_reactivation") and keeps_deactivated:
        return {**queued, "op": "update", "group_id": event["group"]["id"], "data": {"deactivated": False}}
    if "for_reactivation" in event:
        return {key: value for key, value in event.items() if key != "for_reactivation"}
    return event
