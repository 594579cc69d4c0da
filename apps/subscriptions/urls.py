from django.urls import path

from apps.subscriptions import views

urlpatterns = [
    path("users/me/subscriptions", views.SubscriptionsView.as_view()),
    path("users/me/subscriptions/properties", views.SubscriptionPropertiesView.as_view()),
    path("users/me/subscriptions/muted_topics", views.LegacyMutedTopicsView.as_view()),
    path("users/me/subscriptions/<id:stream_id>", views.SubscriptionView.as_view()),
    path("users/<id:user_id>/subscriptions/<id:stream_id>", views.UserSubscriptionView.as_view()),
    path("user_topics", views.UserTopicsView.as_view()),
    path("channels/create", views.CreateChannelView.as_view()),
    path("streams", views.StreamsView.as_view()),
    path("streams/<id:stream_id>", views.StreamView.as_view()),
    path("streams/<id:stream_id>/members", views.StreamMembersView.as_view()),
    path("streams/<id:stream_id>/email_address", views.StreamEmailAddressView.as_view()),
    path("get_stream_id", views.StreamIdView.as_view()),
    path("default_streams", views.DefaultStreamsView.as_view()),
    path("default_stream_groups/create", views.DefaultChannelGroupsView.as_view()),
    path("default_stream_groups/<id:group_id>", views.DefaultChannelGroupView.as_view()),
    path("default_stream_groups/<id:group_id>/streams", views.DefaultChannelGroupChannelsView.as_view()),
    # PATCH /realm is here: it changes the organization's group-valued and channel-valued settings too.
    path("realm", views.RealmView.as_view()),
]
