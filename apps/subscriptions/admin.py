"""Admin pages for channels, subscriptions and topic policies; changes go through the actions of
apps.subscriptions.actions (channels are created with `manage.py create_stream` or the API)."""

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q

from apps.core.admin import ModelAdmin, ReadOnlyAdmin, confirmed_action
from apps.core.errors import JsonableError
from apps.subscriptions.actions.channels import (
    check_description,
    check_stream_name,
    do_change_stream_description,
    do_deactivate_stream,
    do_rename_stream,
    do_set_default_channel,
    do_unarchive_stream,
)
from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions
from apps.subscriptions.models import DefaultChannelGroup, Stream, Subscription, UserTopic


class StreamForm(forms.ModelForm):
    class Meta:
        model = Stream
        fields = ("name", "description")

    def clean_name(self):
        try:
            name = check_stream_name(self.cleaned_data["name"])
        except JsonableError as exc:
            raise forms.ValidationError(exc.msg) from None
        taken = Stream.objects.filter(realm_id=self.instance.realm_id, name__iexact=name).exclude(id=self.instance.id)
        if taken.exists():
            raise forms.ValidationError(f"Channel '{name}' already exists")
        return name

    def clean_description(self):
        return check_description(self.cleaned_data["description"])


@admin.register(Stream)
class StreamAdmin(ModelAdmin):
    form = StreamForm
    list_display = ("name", "realm", "invite_only", "subscriber_count", "is_default", "deactivated", "date_created")
    list_filter = ("realm", "invite_only", "is_default", "deactivated")
    search_fields = ("name", "description", "realm__string_id")
    list_select_related = ("realm", "creator")
    readonly_fields = (
        "realm",
        "creator",
        "date_created",
        "invite_only",
        "history_public_to_subscribers",
        "deactivated",
        "is_default",  # the actions below, or the API
        "rendered_description",
        "folder",  # changed through the API (PATCH /streams/{id})
        *Stream.SETTINGS,
    )
    actions = ("archive", "unarchive", "make_default", "remove_from_defaults")

    def get_queryset(self, request):
        active = Q(subscriptions__active=True, subscriptions__user__is_active=True)
        return super().get_queryset(request).annotate(active_subscribers=Count("subscriptions", filter=active))

    @admin.display(description="subscribers", ordering="active_subscribers")
    def subscriber_count(self, stream: Stream) -> int:
        return stream.active_subscribers

    def has_add_permission(self, request) -> bool:
        return False  # manage.py create_stream, or the API: a new channel needs its settings

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # channels are archived, never deleted

    def save_model(self, request, obj: Stream, form, change: bool) -> None:
        stream = Stream.objects.select_related("realm").get(id=obj.id)
        data = form.cleaned_data
        if "description" in form.changed_data:
            do_change_stream_description(stream, data["description"], acting_user=request.user)
        if "name" in form.changed_data and data["name"] != stream.name:
            do_rename_stream(stream, data["name"], acting_user=request.user)

    @confirmed_action(
        description="Archive the selected channels",
        consequence="Nothing more can be sent to them; their messages stay readable. They can be unarchived later.",
    )
    def archive(self, request, queryset) -> None:
        streams = list(queryset.select_related("realm").filter(deactivated=False))
        for stream in streams:
            do_deactivate_stream(stream, acting_user=request.user)
        self.message_user(request, f"Archived {len(streams)} channel(s).", messages.SUCCESS)

    @admin.action(description="Unarchive the selected channels")
    def unarchive(self, request, queryset) -> None:
        done = 0
        for stream in queryset.select_related("realm").filter(deactivated=True):
            try:
                do_unarchive_stream(stream, acting_user=request.user)
                done += 1
            except JsonableError as exc:
                self.message_user(request, f"{stream.name}: {exc.msg}", messages.ERROR)
        self.message_user(request, f"Unarchived {done} channel(s).", messages.SUCCESS)

    @admin.action(description="Make the selected public channels default (people who join join them)")
    def make_default(self, request, queryset) -> None:
        streams = list(queryset.select_related("realm").filter(invite_only=False, deactivated=False))
        for stream in streams:
            do_set_default_channel(stream, True, acting_user=request.user)
        self.message_user(request, f"{len(streams)} channel(s) are default channels.", messages.SUCCESS)

    @admin.action(description="Remove the selected channels from the default channels")
    def remove_from_defaults(self, request, queryset) -> None:
        streams = list(queryset.select_related("realm").filter(is_default=True))
        for stream in streams:
            do_set_default_channel(stream, False, acting_user=request.user)
        self.message_user(request, f"{len(streams)} channel(s) are no longer default channels.", messages.SUCCESS)


@admin.register(Subscription)
class SubscriptionAdmin(ModelAdmin):
    list_display = ("user", "stream", "active", "is_muted", "pin_to_top")
    list_filter = ("active", "stream__realm")
    search_fields = ("user__full_name", "user__delivery_email", "stream__name")
    list_select_related = ("user", "stream")
    readonly_fields = [field.name for field in Subscription._meta.fields]
    actions = ("unsubscribe",)

    def has_add_permission(self, request) -> bool:
        return False  # manage.py add_users_to_streams, or the API

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # "unsubscribe" keeps the user's settings for a rejoin

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # the user's own settings

    @confirmed_action(
        description="Unsubscribe the selected users",
        consequence="They stop receiving the channels' messages (a private channel's too, until added again).",
    )
    def unsubscribe(self, request, queryset) -> None:
        count = 0
        for sub in queryset.select_related("user", "stream__realm").filter(active=True):
            bulk_remove_subscriptions(sub.stream.realm, [sub.user], [sub.stream], acting_user=request.user)
            count += 1
        self.message_user(request, f"Removed {count} subscription(s).", messages.SUCCESS)


@admin.register(UserTopic)
class UserTopicAdmin(ModelAdmin):
    list_display = ("user", "stream", "topic_name", "visibility_policy", "last_updated")
    list_filter = ("visibility_policy",)
    search_fields = ("user__delivery_email", "stream__name", "topic_name")
    list_select_related = ("user", "stream")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # each user's own choice

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # the user's clients would not hear of it (no event): users change their own


@admin.register(DefaultChannelGroup)
class DefaultChannelGroupAdmin(ReadOnlyAdmin):
    """Default channel groups, read only (administrators change them through the API)."""

    list_display = ("name", "realm", "description", "channels")
    list_filter = ("realm",)
    search_fields = ("name", "realm__string_id")
    ordering = ("realm", "name")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("realm").prefetch_related("streams")

    @admin.display(description="channels")
    def channels(self, group: DefaultChannelGroup) -> str:
        return ", ".join(f"#{stream.name}" for stream in group.streams.all())
