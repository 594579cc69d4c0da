from django.urls import path

from apps.folders import views

urlpatterns = [
    path("channel_folders", views.ChannelFoldersView.as_view()),
    path("channel_folders/create", views.CreateChannelFolderView.as_view()),
    path("channel_folders/<id:channel_folder_id>", views.ChannelFolderView.as_view()),
]
