from django.urls import path

from apps.groups import views

urlpatterns = [
    path("user_groups", views.UserGroupsView.as_view()),
    path("user_groups/create", views.CreateUserGroupView.as_view()),
    path("user_groups/<id:user_group_id>", views.UserGroupView.as_view()),
    path("user_groups/<id:user_group_id>/deactivate", views.DeactivateUserGroupView.as_view()),
    path("user_groups/<id:user_group_id>/members", views.UserGroupMembersView.as_view()),
    path("user_groups/<id:user_group_id>/members/<id:user_id>", views.UserGroupMemberView.as_view()),
    path("user_groups/<id:user_group_id>/subgroups", views.UserGroupSubgroupsView.as_view()),
]
