"""Giving a bot to another person of its organization."""

from django.db import transaction

from apps.core.errors import JsonableError
from apps.events.publish import forget_credentials_on_commit
from apps.realms.models import AuditLogEventType
from apps.users.actions.notify import audit_user_change, send_person_update
from apps.users.bots import send_bot_added, send_bot_removed
from apps.users.hooks import bot_owner_changed
from apps.users.models import User


def do_change_bot_owner(bot: User, owner: User, *, acting_user: User | None) -> None:
    """Give the bot to another active user of its organization.

    Audit: USER_BOT_OWNER_CHANGED. Emits: realm_user/update {bot_owner_id}; as Zulip's
    send_bot_owner_update_events, realm_bot/delete to the previous owner and realm_bot/add to the
    new one (unless they are administrators, who administer it still); then what the
    bot_owner_changed hooks send (the bot leaves the private channels its new owner is not in)."""
    if not bot.is_bot:
        raise JsonableError("Only bots have an owner")
    if owner.realm_id != bot.realm_id or not owner.is_active or owner.is_bot:
        raise JsonableError("Invalid bot owner")
    old_owner_id = bot.bot_owner_id
    if owner.id == old_owner_id:
        return
    old_owner = User.objects.filter(id=old_owner_id).first() if old_owner_id is not None else None
    with transaction.atomic(savepoint=False):
        User.objects.filter(id=bot.id).update(bot_owner=owner)
        bot.bot_owner = owner
        forget_credentials_on_commit(user_ids=[bot.id])
        audit_user_change(
            bot,
            AuditLogEventType.USER_BOT_OWNER_CHANGED,
            "bot_owner_id",
            old_owner_id,
            owner.id,
            acting_user=acting_user,
        )
        send_person_update(bot, {"bot_owner_id": owner.id})
        if old_owner is not None and not old_owner.is_admin:
            send_bot_removed(bot, {old_owner.id})
        if not owner.is_admin:
            send_bot_added(bot, {owner.id})
        bot_owner_changed.call(bot, acting_user)
