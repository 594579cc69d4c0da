from django.urls import path

from apps.users import views

urlpatterns = [
    path("fetch_api_key", views.FetchApiKeyView.as_view()),
    path("users", views.UsersView.as_view()),
    path("users/me", views.OwnUserView.as_view()),
    path("users/me/avatar", views.OwnAvatarView.as_view()),
    path("users/me/profile_data", views.OwnProfileDataView.as_view()),
    path("users/<id:user_id>", views.UserView.as_view()),
    path("users/<id:user_id>/reactivate", views.ReactivateUserView.as_view()),
    path("users/<str:email>", views.UserByEmailView.as_view()),
    path("settings", views.SettingsView.as_view()),
    path("settings/display", views.SettingsView.as_view()),
    path("settings/notifications", views.SettingsView.as_view()),
    path("realm/user_settings_defaults", views.RealmUserDefaultsView.as_view()),
    path("realm/profile_fields", views.CustomProfileFieldsView.as_view()),
    path("realm/profile_fields/<id:field_id>", views.CustomProfileFieldView.as_view()),
]
