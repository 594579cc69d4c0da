from django.urls import path

from apps.uploads import pages

urlpatterns = [
    path("user_uploads/temporary/<str:token>/<str:name>", pages.TemporaryFileView.as_view()),
    path(
        "user_uploads/thumbnail/<id:realm_id>/<str:random>/<str:name>/<str:format_name>",
        pages.ThumbnailView.as_view(),
    ),
    path("user_uploads/download/<id:realm_id>/<str:random>/<str:name>", pages.DownloadFileView.as_view()),
    path("user_uploads/<id:realm_id>/<str:random>/<str:name>", pages.ServeFileView.as_view()),
    path("user_avatars/<id:realm_id>/emoji/images/still/<str:name>", pages.StillEmojiImageView.as_view()),
    path("user_avatars/<id:realm_id>/emoji/images/<str:name>", pages.EmojiImageView.as_view()),
    path("user_avatars/<id:realm_id>/<str:name>", pages.AvatarImageView.as_view()),
]
