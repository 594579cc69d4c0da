from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("api/v1/", include("apps.realms.urls")),
    path("api/v1/", include("apps.users.urls")),
    path("api/v1/", include("apps.events.urls")),
    path("admin/", admin.site.urls),
]

handler400 = "apps.core.views.bad_request"
handler403 = "apps.core.views.permission_denied"
handler404 = "apps.core.views.not_found"
handler500 = "apps.core.views.server_error"
