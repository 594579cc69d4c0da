"""Hooks the users app calls (see apps/core/hooks.py); higher apps register with them.

Each runs inside the action's transaction, after the user's own change and its realm_user event.
"""

from typing import NamedTuple

from apps.core.hooks import Hooks


class Joining(NamedTuple):
    """How a person joined (person_created): what their invitation, if any, said."""

    # The text their invitation adds to the welcome (None: the organization's default; "": none).
    welcome_message_custom_text: str | None = None
    # Whether they join the organization's default channels (an invitation link says).
    default_channels: bool = True
    # The channels their invitation names.
    channel_ids: tuple[int, ...] = ()


# user_created(user): a user or bot was created (apps.groups: the system groups of their role).
user_created = Hooks("user_created")

# person_created(user, joining): a person (not a bot) was created, after the user_created hooks,
# `joining` as above (apps.subscriptions: they join their channels; then apps.messages: the recent
# messages of those channels, Zulip's add_new_user_history; apps.invites: the Welcome Bot's direct
# message).
person_created = Hooks("person_created")

# user_role_changing(user, old_role, new_role) -> callable or None: called before the role changes
# (to read what the change will affect); what it returns is called after it (apps.groups: system
# groups; apps.subscriptions: the channels the user now sees or no longer sees).
user_role_changing = Hooks("user_role_changing")

# users_deactivated(users): these users (a user and their bots) were deactivated
# (apps.groups: settings listing them; apps.subscriptions: subscriber lists; apps.invites: the
# invitations they made).
users_deactivated = Hooks("users_deactivated")

# user_reactivated(user): the user was reactivated (the same, the other way).
user_reactivated = Hooks("user_reactivated")

# bot_reactivating(bot, acting_user): `acting_user` asks to reactivate `bot`; a function raises to
# refuse (apps.bots: they must still be allowed to make bots of its kind, as in Zulip).
bot_reactivating = Hooks("bot_reactivating")

# bot_owner_changed(bot, acting_user): the bot was given to another person, bot.bot_owner
# (apps.subscriptions: it leaves the private channels its new owner is not in).
bot_owner_changed = Hooks("bot_owner_changed")

# own_user_extras(user) -> dict: fields of GET /users/me that other apps own
# (apps.messages: max_message_id).
own_user_extras = Hooks("own_user_extras")

# user_settings_changed(user, changed): the user's settings (PATCH /settings) changed; `changed` maps
# each changed setting's name to its new value (apps.drafts: turning enable_drafts_synchronization
# off deletes the user's stored drafts; apps.presence: presence_enabled changed is told at once).
user_settings_changed = Hooks("user_settings_changed")

# settings_target_members(realm, group_ids) -> set of user ids: the active members (through
# subgroups) of these named groups of the organization, for PATCH /settings' `target_users`; raises
# JsonableError for an id that is not one (apps.groups).
settings_target_members = Hooks("settings_target_members")

# user_peers(user_ids) -> {user id: set of user ids}: for each of these people, the active people
# they share a channel or a direct message conversation with; a guest of an organization that
# limits what guests see (can_access_all_users_group) sees only those (apps/users/access.py;
# apps.subscriptions: channel subscribers; apps.messages: direct message partners). One query or
# two each, whatever the number of people.
user_peers = Hooks("user_peers")
