"""User group mentions, as Zulip's: `@*group*` mentions the named group's members (through its
subgroups: each gets the `mentioned` flag), `@_*group*` names the group and notifies nobody. A
deactivated group's mention is silent; a system group is shown by its display name ("Moderators");
a name that is no group of the organization is left as written. Mentioning a group (not silently)
takes its can_mention_group permission, system groups' being "nobody"."""

from collections.abc import Collection

from apps.core.errors import JsonableError
from apps.groups.models import SystemGroups, UserGroup
from apps.groups.selectors import member_ids_by_group, recursive_membership_group_ids, user_has_permission
from apps.messages.rendering import GROUP_MENTION_RE, GroupTarget
from apps.users.models import User

# Zulip's SystemGroups.GROUP_DISPLAY_NAME_MAP: how a system group's mention reads.
SYSTEM_GROUP_DISPLAY_NAMES = {
    SystemGroups.NOBODY: "Nobody",
    SystemGroups.OWNERS: "Owners",
    SystemGroups.ADMINISTRATORS: "Administrators",
    SystemGroups.MODERATORS: "Moderators",
    SystemGroups.FULL_MEMBERS: "Full members",
    SystemGroups.MEMBERS: "Members",
    SystemGroups.EVERYONE: "Everyone",
    SystemGroups.EVERYONE_ON_INTERNET: "Everyone on the internet",
}


def group_mention_targets(realm_id: int, content: str) -> dict[str, GroupTarget]:
    """The named groups the content's group mentions may name, as render_message takes them: {name:
    (id, name as shown, deactivated)}. Names match exactly, as in Zulip. One query, only when the
    content has group mentions."""
    names = {match.group(2) for match in GROUP_MENTION_RE.finditer(content)}
    if not names:
        return {}
    groups = UserGroup.objects.filter(realm_id=realm_id, name__in=names)
    return {
        name: (group_id, SYSTEM_GROUP_DISPLAY_NAMES.get(name, name) if is_system else name, deactivated)
        for group_id, name, is_system, deactivated in groups.values_list("id", "name", "is_system_group", "deactivated")
    }


def check_group_mentions_allowed(sender: User, group_ids: Collection[int]) -> None:
    """ "You are not allowed to mention user group 'name'." unless `sender` holds each group's
    can_mention_group (anyone may when it is "everyone"; the sender's groups are read only if not)."""
    membership: set[int] | None = None
    setting = UserGroup.SETTINGS["can_mention_group"]
    groups = UserGroup.objects.filter(id__in=group_ids).select_related("can_mention_group").order_by("id")
    for group in groups:
        allowed_group = group.can_mention_group
        if allowed_group.is_system_group and allowed_group.name == SystemGroups.EVERYONE:
            continue
        if membership is None:
            membership = recursive_membership_group_ids(sender)
        if not user_has_permission(sender, allowed_group.id, setting, membership):
            raise JsonableError(f"You are not allowed to mention user group '{group.name}'.")


def mentioned_group_member_ids(group_ids: Collection[int]) -> set[int]:
    """The active members of the mentioned groups, through their subgroups."""
    return set().union(*member_ids_by_group(group_ids).values())
