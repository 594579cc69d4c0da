from apps.core.views import ApiRouter
from apps.drafts import views

router = ApiRouter()
router.register("drafts", views.DraftViewSet, basename="draft")

urlpatterns = router.urls
