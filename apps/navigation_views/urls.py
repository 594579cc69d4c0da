from django.urls import path

from apps.navigation_views import views

urlpatterns = [
    path("navigation_views", views.NavigationViewsView.as_view()),
    # A fragment may hold slashes (narrow/is/starred).
    path("navigation_views/<textpath:fragment>", views.NavigationViewView.as_view()),
]
