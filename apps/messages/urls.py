from django.urls import path

from apps.messages import views

urlpatterns = [
    path("messages", views.MessagesView.as_view()),
    path("messages/matches_narrow", views.MatchesNarrowView.as_view()),
    path("messages/flags", views.MessageFlagsView.as_view()),
    path("messages/flags/narrow", views.MessageFlagsForNarrowView.as_view()),
    path("messages/<id:message_id>", views.MessageView.as_view()),
    path("messages/<id:message_id>/reactions", views.ReactionsView.as_view()),
    path("messages/<id:message_id>/history", views.MessageHistoryView.as_view()),
    path("messages/<id:message_id>/read_receipts", views.ReadReceiptsView.as_view()),
    path("messages/<id:message_id>/report", views.ReportMessageView.as_view()),
    path("messages/<id:message_id>/typing", views.EditTypingView.as_view()),
    path("message_edit_typing", views.LegacyEditTypingView.as_view()),
    path("submessage", views.SubmessageView.as_view()),
    path("typing", views.TypingView.as_view()),
    path("users/me/<id:stream_id>/topics", views.ChannelTopicsView.as_view()),
    path("mark_all_as_read", views.MarkAllAsReadView.as_view()),
    path("mark_stream_as_read", views.MarkStreamAsReadView.as_view()),
    path("mark_topic_as_read", views.MarkTopicAsReadView.as_view()),
    path("users/me/muted_users/<id:muted_user_id>", views.MutedUserView.as_view()),
    path("users/me/alert_words", views.AlertWordsView.as_view()),
    path("streams/<id:stream_id>/delete_topic", views.DeleteTopicView.as_view()),
]
