"""What the events app does for the apps below it (registered in EventsConfig.ready)."""

from apps.core.health import readiness_details
from apps.events import metrics  # noqa: F401 (registers the event queues' figures with apps.core.metrics)
from apps.events.backends import get_backend


@readiness_details.register
def polls_waiting() -> dict[str, int]:
    """The long-polls parked in this server process right now, for GET /health/ready."""
    return {"event_polls_waiting": get_backend().waiters.count()}
