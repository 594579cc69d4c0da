from django.urls import path

from apps.linkifiers import views

urlpatterns = [
    path("realm/linkifiers", views.LinkifiersView.as_view()),
    path("realm/filters", views.FiltersView.as_view()),
    path("realm/filters/<id:filter_id>", views.FilterView.as_view()),
    path("realm/playgrounds", views.PlaygroundsView.as_view()),
    path("realm/playgrounds/<id:playground_id>", views.PlaygroundView.as_view()),
]
