from apps.core.views import ApiRouter
from apps.snippets import views

router = ApiRouter()
router.register("saved_snippets", views.SavedSnippetViewSet, basename="saved_snippet")

urlpatterns = router.urls
