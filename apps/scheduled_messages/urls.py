from django.urls import path

from apps.scheduled_messages import views

urlpatterns = [
    path("scheduled_messages", views.ScheduledMessagesView.as_view()),
    path("scheduled_messages/<id:scheduled_message_id>", views.ScheduledMessageView.as_view()),
    path("reminders", views.RemindersView.as_view()),
    path("reminders/<id:reminder_id>", views.ReminderView.as_view()),
]
