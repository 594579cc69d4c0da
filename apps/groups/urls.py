from django.urls import path

from apps.core.views import ApiRouter
from apps.groups import views

router = ApiRouter()
router.register("user_groups", views.UserGroupViewSet, basename="user_group")

urlpatterns = [
    # PATCH /realm is here: it changes the organization's group-valued settings too.
    path("realm", views.RealmView.as_view()),
    *router.urls,
]
