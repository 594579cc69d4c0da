from django.apps import AppConfig


class NavigationViewsConfig(AppConfig):
    name = "apps.navigation_views"
    label = "navigation_views"
    verbose_name = "navigation views"
