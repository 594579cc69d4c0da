from django.urls import path

from apps.core.views import ApiRouter
from apps.uploads import views

router = ApiRouter()
router.register("attachments", views.AttachmentViewSet, basename="attachment")

urlpatterns = [
    path("user_uploads", views.UploadFileView.as_view()),
    path("user_uploads/<id:realm_id>/<str:random>/<str:name>", views.FileTemporaryUrlView.as_view()),
    path("realm/emoji", views.RealmEmojiListView.as_view()),
    # Any name, "/" too (Zulip's route takes it): the name's rules answer, not a 404.
    path("realm/emoji/<path:emoji_name>", views.RealmEmojiView.as_view()),
    *router.urls,
]
