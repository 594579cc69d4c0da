from django.urls import path

from apps.push import views

urlpatterns = [
    path("users/me/apns_device_token", views.ApnsTokenView.as_view()),
    path("users/me/android_gcm_reg_id", views.FcmTokenView.as_view()),
    path("mobile_push/test_notification", views.TestNotificationView.as_view()),
    path("mobile_push/e2ee/test_notification", views.EncryptedTestNotificationView.as_view()),
    path("register_client_device", views.RegisterClientDeviceView.as_view()),
    path("remove_client_device", views.RemoveClientDeviceView.as_view()),
    path("mobile_push/register", views.RegisterPushDeviceView.as_view()),
]
