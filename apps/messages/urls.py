from django.urls import path

from apps.messages.views import conversation, flags, messages

urlpatterns = [
    path("messages", messages.MessagesView.as_view()),
    path("messages/matches_narrow", messages.MatchesNarrowView.as_view()),
    path("messages/render", messages.RenderMessageView.as_view()),
    path("messages/flags", flags.MessageFlagsView.as_view()),
    path("messages/flags/narrow", flags.MessageFlagsForNarrowView.as_view()),
    path("messages/<id:message_id>", messages.MessageView.as_view()),
    path("messages/<id:message_id>/reactions", conversation.ReactionsView.as_view()),
    path("messages/<id:message_id>/history", messages.MessageHistoryView.as_view()),
    path("messages/<id:message_id>/read_receipts", messages.ReadReceiptsView.as_view()),
    path("messages/<id:message_id>/report", messages.ReportMessageView.as_view()),
    path("messages/<id:message_id>/typing", conversation.EditTypingView.as_view()),
    path("message_edit_typing", conversation.LegacyEditTypingView.as_view()),
    path("submessage", conversation.SubmessageView.as_view()),
    path("typing", conversation.TypingView.as_view()),
    path("users/me/<id:stream_id>/topics", conversation.ChannelTopicsView.as_view()),
    path("mark_all_as_read", flags.MarkAllAsReadView.as_view()),
    path("mark_stream_as_read", flags.MarkStreamAsReadView.as_view()),
    path("mark_topic_as_read", flags.MarkTopicAsReadView.as_view()),
    path("users/me/muted_users/<id:muted_user_id>", flags.MutedUserView.as_view()),
    path("users/me/alert_words", flags.AlertWordsView.as_view()),
    path("streams/<id:stream_id>/delete_topic", conversation.DeleteTopicView.as_view()),
]
