"""Navigation views' part of the event system: the `navigation_views` initial state. Their events
(navigation_view add, update, remove) go to the user's own queues as they are."""

from apps.events.registry import StateContext, initial_state
from apps.navigation_views.selectors import navigation_views_for_user


@initial_state("navigation_views")
def navigation_views_state(context: StateContext) -> dict:
    return {"navigation_views": navigation_views_for_user(context.user)}
