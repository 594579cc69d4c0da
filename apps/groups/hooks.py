"""Hooks the groups app calls (see apps/core/hooks.py); higher apps register with them."""

from apps.core.hooks import Hooks

# group_deactivation_objections(group, users_of_group) -> list of Zulip `objections`: what of the
# registering app still uses the group (a setting whose value is a group id in `users_of_group`:
# the group, or an anonymous group containing it). apps.subscriptions: channels' settings.
group_deactivation_objections = Hooks("group_deactivation_objections")

# group_membership_changing(group) -> callable or None: called before the group's members or
# subgroups change; what it returns is called after (apps.subscriptions: who now sees, or no longer
# sees, a private channel through the group).
group_membership_changing = Hooks("group_membership_changing")
