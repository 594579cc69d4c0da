from django.urls import path

from apps.uploads import pages

urlpatterns = [
    path("user_uploads/temporary/<str:token>/<str:name>", pages.TemporaryFileView.as_view()),
    path("user_uploads/download/<int:realm_id>/<path:path>", pages.DownloadFileView.as_view()),
    path("user_uploads/<int:realm_id>/<path:path>", pages.ServeFileView.as_view()),
    path("user_avatars/<int:realm_id>/emoji/images/still/<str:name>", pages.StillEmojiImageView.as_view()),
    path("user_avatars/<int:realm_id>/emoji/images/<str:name>", pages.EmojiImageView.as_view()),
]
