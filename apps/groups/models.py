from dataclasses import dataclass

from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone

from apps.realms.models import Realm
from apps.users.models import Role, User


class SystemGroups:
    """Names of the groups every organization has, kept in step with roles (Zulip's system groups)."""

    OWNERS = "role:owners"
    ADMINISTRATORS = "role:administrators"
    MODERATORS = "role:moderators"
    FULL_MEMBERS = "role:fullmembers"
    MEMBERS = "role:members"
    EVERYONE = "role:everyone"
    EVERYONE_ON_INTERNET = "role:internet"
    NOBODY = "role:nobody"

    # In creation order (so in id order); each group from owners on is a direct subgroup of the next.
    DESCRIPTIONS = {
        NOBODY: "Nobody",
        OWNERS: "Owners of this organization",
        ADMINISTRATORS: "Administrators of this organization, including owners",
        MODERATORS: "Moderators of this organization, including administrators",
        FULL_MEMBERS: "Members of this organization, not including new accounts and guests",
        MEMBERS: "Members of this organization, not including guests",
        EVERYONE: "Everyone in this organization, including guests",
        EVERYONE_ON_INTERNET: "Everyone on the Internet",
    }
    NESTED = (OWNERS, ADMINISTRATORS, MODERATORS, FULL_MEMBERS, MEMBERS, EVERYONE, EVERYONE_ON_INTERNET)

    # The system groups a user of each role is a direct member of; a member joins FULL_MEMBERS once
    # past the organization's waiting_period_threshold (actions.system_groups.is_full_member).
    FOR_ROLE = {
        Role.OWNER: (OWNERS,),
        Role.ADMINISTRATOR: (ADMINISTRATORS,),
        Role.MODERATOR: (MODERATORS,),
        Role.MEMBER: (MEMBERS, FULL_MEMBERS),
        Role.GUEST: (EVERYONE,),
    }


@dataclass(frozen=True)
class GroupSetting:
    """How a group-valued permission setting may be set (Zulip's GroupPermissionSetting)."""

    default: str  # a system group name, or GROUP_CREATOR
    allow_everyone_group: bool
    allow_internet_group: bool = False
    allow_nobody_group: bool = True
    # Only a system group, and (when given) only these ones.
    require_system_group: bool = False
    allowed_system_groups: tuple[str, ...] = ()


# The default of a setting that starts as {direct_members: [creator], direct_subgroups: []}.
GROUP_CREATOR = "group_creator"

# Group-valued settings of an organization: fields of Realm (whose app cannot import this one), set
# to their defaults with the system groups. Zulip's REALM_PERMISSION_GROUP_SETTINGS, those Parley has.
REALM_SETTINGS = {
    "create_multiuse_invite_group": GroupSetting(default=SystemGroups.ADMINISTRATORS, allow_everyone_group=False),
    "can_invite_users_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_add_subscribers_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_create_private_channel_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_create_public_channel_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_delete_any_message_group": GroupSetting(default=SystemGroups.ADMINISTRATORS, allow_everyone_group=False),
    "can_delete_own_message_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
    "can_move_messages_between_channels_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_move_messages_between_topics_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
    "can_resolve_topics_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
    "can_set_delete_message_policy_group": GroupSetting(default=SystemGroups.MODERATORS, allow_everyone_group=False),
    "can_set_topics_policy_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=True),
    "can_add_custom_emoji_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_mention_many_users_group": GroupSetting(default=SystemGroups.ADMINISTRATORS, allow_everyone_group=True),
    "can_create_bots_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_create_write_only_bots_group": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_create_groups": GroupSetting(default=SystemGroups.MEMBERS, allow_everyone_group=False),
    "can_manage_all_groups": GroupSetting(
        default=SystemGroups.OWNERS, allow_everyone_group=False, allow_nobody_group=False
    ),
    "direct_message_permission_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
    "direct_message_initiator_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
    # Whether guests see everyone, or only the people they share a channel or a conversation with.
    "can_access_all_users_group": GroupSetting(
        default=SystemGroups.EVERYONE,
        allow_everyone_group=True,
        allow_nobody_group=False,
        require_system_group=True,
        allowed_system_groups=(SystemGroups.EVERYONE, SystemGroups.MEMBERS),
    ),
}


class UserGroup(models.Model):
    """A user group of one organization: named (system or user-defined) or anonymous.

    Anonymous groups (`name` is NULL) are the values of group settings given as
    `{direct_members, direct_subgroups}`; they are never listed and cannot be subgroups. Named groups
    have all `can_*_group` settings; anonymous groups have none. Members are direct members; the
    members of a group through its subgroups are read with the recursive selectors. Memberships of
    deactivated users are kept (reactivation restores them) and ignored by every read.
    """

    MAX_NAME_LENGTH = 100
    INVALID_NAME_PREFIXES = ("@", "role:", "user:", "stream:", "channel:")

    # name -> how it may be set; the order is the order of the API's fields.
    SETTINGS = {
        "can_add_members_group": GroupSetting(default=GROUP_CREATOR, allow_everyone_group=False),
        "can_join_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=False),
        "can_leave_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
        "can_manage_group": GroupSetting(default=GROUP_CREATOR, allow_everyone_group=False),
        "can_mention_group": GroupSetting(default=SystemGroups.EVERYONE, allow_everyone_group=True),
        "can_remove_members_group": GroupSetting(default=SystemGroups.NOBODY, allow_everyone_group=False),
    }

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="user_groups")
    # NULL, not "", marks an anonymous group: names are unique per organization, NULLs never clash.
    name = models.CharField(max_length=MAX_NAME_LENGTH, null=True, blank=True)  # noqa: DJ001
    description = models.TextField(blank=True, default="")
    is_system_group = models.BooleanField(default=False)
    deactivated = models.BooleanField(default=False)
    creator = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    date_created = models.DateTimeField(default=timezone.now, null=True)

    direct_members = models.ManyToManyField(User, through="UserGroupMembership", related_name="direct_groups")
    direct_subgroups = models.ManyToManyField(
        "self",
        symmetrical=False,
        through="GroupGroupMembership",
        through_fields=("supergroup", "subgroup"),
        related_name="direct_supergroups",
    )

    # Group-valued settings of named groups: a named group, or an anonymous group of this one's own.
    can_add_members_group = models.ForeignKey("self", on_delete=models.PROTECT, null=True, related_name="+")
    can_join_group = models.ForeignKey("self", on_delete=models.PROTECT, null=True, related_name="+")
    can_leave_group = models.ForeignKey("self", on_delete=models.PROTECT, null=True, related_name="+")
    can_manage_group = models.ForeignKey("self", on_delete=models.PROTECT, null=True, related_name="+")
    can_mention_group = models.ForeignKey("self", on_delete=models.PROTECT, null=True, related_name="+")
    can_remove_members_group = models.ForeignKey("self", on_delete=models.PROTECT, null=True, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(Upper("name"), "realm", name="groups_usergroup_unique_name_per_realm"),
            models.CheckConstraint(
                condition=models.Q(name__isnull=False) | models.Q(is_system_group=False, deactivated=False),
                name="groups_usergroup_anonymous_is_plain",
            ),
        ]

    def __str__(self) -> str:
        return self.name if self.name is not None else f"(setting group {self.id})"

    @property
    def is_anonymous(self) -> bool:
        return self.name is None


class UserGroupMembership(models.Model):
    user_group = models.ForeignKey(UserGroup, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="group_memberships")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user_group", "user"], name="groups_membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.user_group}"


class GroupGroupMembership(models.Model):
    supergroup = models.ForeignKey(UserGroup, on_delete=models.CASCADE, related_name="subgroup_links")
    subgroup = models.ForeignKey(UserGroup, on_delete=models.CASCADE, related_name="supergroup_links")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["supergroup", "subgroup"], name="groups_subgroup_unique"),
            models.CheckConstraint(
                condition=~models.Q(supergroup=models.F("subgroup")), name="groups_subgroup_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subgroup} in {self.supergroup}"
