"""Bots (/api/v1/bots...): people (not guests, not bots) make bots and administer their own;
administrators administer every bot with an owner."""

from rest_framework.request import Request

from apps.bots.actions import check_create_bot, check_update_bot, do_deactivate_bot
from apps.bots.selectors import access_bot_by_id, owned_active_bots
from apps.bots.serializers import CreateBotParams, UpdateBotParams, bot_defaults_to_dict, owned_bot_to_dict
from apps.core.params import parse_params, uploaded_files, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsHuman, IsNotGuest
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.users.actions.user_settings import do_regenerate_api_key
from apps.users.bots import BOT_DEFAULTS
from apps.users.models import BotService
from apps.users.selectors import api_email, avatar_url

# Zulip's require_member_or_admin: "Not allowed for guest users", then "This endpoint does not accept
# bot requests."
MEMBERS_AND_ADMINS = [IsAuthenticatedUser, IsNotGuest, IsHuman]


class BotsView(ApiView):
    """GET /bots: the user's own active bots; POST: make one."""

    permission_classes = MEMBERS_AND_ADMINS

    def get(self, request: Request):
        return json_success(request, {"bots": [owned_bot_to_dict(bot) for bot in owned_active_bots(request.user)]})

    @uses_params(CreateBotParams)
    def post(self, request: Request):
        params = parse_params(CreateBotParams, request)
        bot = check_create_bot(
            request.user,
            full_name=params.full_name,
            short_name=params.short_name,
            bot_type=params.bot_type,
            payload_url=params.payload_url,
            service_name=params.service_name,
            interface_type=params.interface_type,
            defaults={name: getattr(params, name) for name in BOT_DEFAULTS},
            avatar=uploaded_files(request),
        )
        return json_success(
            request,
            {"user_id": bot.id, "api_key": bot.api_key, "avatar_url": avatar_url(bot), **bot_defaults_to_dict(bot)},
        )


class BotView(ApiView):
    """PATCH /bots/{bot_id}: change it; DELETE: deactivate it."""

    # Deactivating needs only to administer the bot (Zulip's view has no role gate).
    method_permission_classes = {"patch": [IsNotGuest, IsHuman]}

    @uses_params(UpdateBotParams)
    def patch(self, request: Request, bot_id: int):
        params = parse_params(UpdateBotParams, request)
        bot = access_bot_by_id(request.user, bot_id)
        check_update_bot(
            bot,
            full_name=params.full_name,
            short_name=params.short_name,
            role=params.role,
            bot_owner_id=params.bot_owner_id,
            service_payload_url=params.service_payload_url,
            service_interface=params.service_interface,
            defaults={name: getattr(params, name) for name in BOT_DEFAULTS},
            avatar=uploaded_files(request),
            acting_user=request.user,
        )
        bot.refresh_from_db()
        service = BotService.objects.filter(bot=bot).order_by("id").first()
        return json_success(
            request,
            {
                "full_name": bot.full_name,
                "avatar_url": avatar_url(bot),
                "service_interface": service.interface if service else BotService.Interface.GENERIC,
                "service_payload_url": service.base_url if service else None,
                "config_data": {},
                **bot_defaults_to_dict(bot),
                **({"bot_owner": api_email(bot.bot_owner)} if bot.bot_owner else {}),
            },
        )

    def delete(self, request: Request, bot_id: int):
        do_deactivate_bot(access_bot_by_id(request.user, bot_id), acting_user=request.user)
        return json_success(request)


class BotApiKeyView(ApiView):
    """GET /bots/{bot_id}/api_key: the bot's key, for those who administer it."""

    permission_classes = MEMBERS_AND_ADMINS

    def get(self, request: Request, bot_id: int):
        return json_success(request, {"api_key": access_bot_by_id(request.user, bot_id).api_key})


class RegenerateBotApiKeyView(ApiView):
    """POST /bots/{bot_id}/api_key/regenerate: a new key; the old one stops working at once."""

    permission_classes = MEMBERS_AND_ADMINS

    def post(self, request: Request, bot_id: int):
        bot = access_bot_by_id(request.user, bot_id)
        return json_success(request, {"api_key": do_regenerate_api_key(bot, acting_user=request.user)})
