from apps.core.views import ApiRouter
from apps.groups import views

router = ApiRouter()
router.register("user_groups", views.UserGroupViewSet, basename="user_group")

urlpatterns = [
    *router.urls,
]
