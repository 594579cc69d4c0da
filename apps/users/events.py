"""Users' part of the event system: the "realm_user", "realm_bot", "custom_profile_fields",
"user_settings" and "realm_user_settings_defaults" initial state (with Zulip's legacy top-level settings), and how user
events adapt to a queue's `client_gravatar`."""

from apps.events.registry import QueueOptions, StateContext, event_filter, event_transform, initial_state
from apps.users.access import as_seen_by
from apps.users.bots import administered_bots, bot_dicts
from apps.users.models import DEFAULT_EXTERNAL_ACCOUNTS, CustomProfileField
from apps.users.selectors import (
    avatar_url,
    custom_profile_data_in_realm,
    get_custom_profile_fields,
    gravatar_url,
    realm_user_default,
    user_rows_in_realm,
)
from apps.users.serializers import (
    custom_profile_field_to_dict,
    settings_object_to_dict,
    settings_to_dict,
    user_to_dict,
    users_to_dicts,
)
from apps.users.settings_models import DISPLAY, NOTIFICATION
from apps.users.settings_values import NOTIFICATION_SOUNDS, emojiset_choices


@initial_state("realm_user")
def realm_user_state(context: StateContext) -> dict:
    me = context.user
    profile_data = custom_profile_data_in_realm(me.realm)
    active, inactive, system_bots = [], [], []
    people = users_to_dicts(
        user_rows_in_realm(me.realm),
        me.realm,
        acting_user=me,
        client_gravatar=context.options.client_gravatar,
        profile_data=profile_data,
    )
    # A guest limited to some people sees the others as unknown users (active ones, as Zulip shows them).
    omit = bool(context.options.client_capabilities.get("user_list_incomplete"))
    for shape in as_seen_by(me, people, omit_inaccessible=omit):
        # The server's own bots apart, as Zulip's (whose are in no organization).
        (system_bots if shape.get("is_system_bot") else active if shape["is_active"] else inactive).append(shape)
    return {
        "realm_users": active,
        "realm_non_active_users": inactive,
        "cross_realm_bots": system_bots,
        "user_id": me.id,
        "email": user_to_dict(me, acting_user=me, client_gravatar=False)["email"],
        "delivery_email": me.delivery_email,
        "full_name": me.full_name,
        "is_admin": me.is_admin,
        "is_owner": me.is_owner,
        "is_moderator": me.is_moderator,
        "is_guest": me.is_guest,
        "role": me.role,
        "avatar_source": me.avatar_source,
        "avatar_version": me.avatar_version,
        "avatar_url": avatar_url(me),
        "avatar_url_medium": avatar_url(me, medium=True),
    }


@initial_state("realm_bot")
def realm_bot_state(context: StateContext) -> dict:
    """The bots the user administers (Zulip's realm_bots): every bot with an owner, for
    administrators; their own, for everyone else."""
    return {"realm_bots": bot_dicts(administered_bots(context.user))}


@initial_state("custom_profile_fields")
def custom_profile_fields_state(context: StateContext) -> dict:
    return {
        "custom_profile_fields": [
            custom_profile_field_to_dict(f) for f in get_custom_profile_fields(context.user.realm)
        ],
        "custom_profile_field_types": {
            field_type.name: {"id": field_type.value, "name": field_type.label}
            for field_type in CustomProfileField.FieldType
        },
        "realm_default_external_accounts": {
            subtype: {
                "name": account["name"],
                "text": account["name"],
                "hint": "",
                "url_pattern": account["url_pattern"],
            }
            for subtype, account in DEFAULT_EXTERNAL_ACCOUNTS.items()
        },
    }


@initial_state("user_settings")
def user_settings_state(context: StateContext) -> dict:
    return {"user_settings": settings_object_to_dict(context.user)}


def _legacy_settings_wanted(context: StateContext) -> bool:
    """Zulip's top-level settings keys go to clients that do not take the `user_settings` object."""
    return not context.options.client_capabilities.get("user_settings_object")


@initial_state("update_display_settings")
def legacy_display_settings_state(context: StateContext) -> dict:
    if not _legacy_settings_wanted(context):
        return {}
    return {**settings_to_dict(context.user, legacy=DISPLAY), "emojiset_choices": emojiset_choices()}


@initial_state("update_global_notifications")
def legacy_notification_settings_state(context: StateContext) -> dict:
    if not _legacy_settings_wanted(context):
        return {}
    return {
        **settings_to_dict(context.user, legacy=NOTIFICATION),
        "available_notification_sounds": list(NOTIFICATION_SOUNDS),
    }


@initial_state("realm_user_settings_defaults")
def realm_user_settings_defaults_state(context: StateContext) -> dict:
    return {"realm_user_settings_defaults": settings_object_to_dict(realm_user_default(context.user.realm))}


@event_transform("realm_user")
def realm_user_for_queue(event: dict, options: QueueOptions) -> dict:
    """Events carry `avatar_url: null` for Gravatar users whose address everyone sees (what a
    `client_gravatar` client wants); other clients get the URL filled in. A person made whom the
    queue's guest may not see is not marked for the client."""
    if "inaccessible_user" in event:  # the filter's mark (realm_user_shown), not for clients (as Zulip)
        event = {key: value for key, value in event.items() if key != "inaccessible_user"}
    person = event.get("person", {})
    if options.client_gravatar or "avatar_url" not in person or person["avatar_url"] is not None:
        return event
    return {**event, "person": {**person, "avatar_url": gravatar_url(person["email"], person["avatar_version"])}}


@event_filter("realm_user")
def realm_user_shown(event: dict, options: QueueOptions) -> bool:
    """A person made whom the queue's guest may not see (apps/users/access.py) is not told to
    clients with the user_list_incomplete capability: they leave unknown users out."""
    return not (event.get("inaccessible_user") and options.client_capabilities.get("user_list_incomplete"))
