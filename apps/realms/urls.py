from django.urls import path

from apps.realms import views

urlpatterns = [
    path("server_settings", views.ServerSettingsView.as_view()),
    path("realm/domains", views.RealmDomainsView.as_view()),
    path("realm/domains/<text:domain>", views.RealmDomainView.as_view()),
]
