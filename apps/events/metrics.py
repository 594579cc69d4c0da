"""The event queues' figures for /metrics, read from the backend when scraped (apps.core.metrics)."""

from collections.abc import Iterable

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from apps.core.errors import count_dependency_failure
from apps.core.metrics import scrape_collectors
from apps.events.backends import get_backend

QUANTILES = (0.5, 0.9, 0.99)


def quantile(ordered: list[int], q: float) -> int:
    """The nearest-rank quantile of an ordered, non-empty list."""
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.5) - 1))]


@scrape_collectors.register
def event_queue_figures() -> Iterable[Metric]:
    """How many event queues exist (in every server process: the backend is shared), and how many
    events they hold: quantiles over the queues and the largest. None while Redis is down."""
    try:
        lengths = sorted(get_backend().queue_lengths())
    except Exception as exc:
        if count_dependency_failure(exc) is None:
            raise
        return []
    queues = GaugeMetricFamily("parley_event_queues", "Event queues that exist", value=len(lengths))
    held = GaugeMetricFamily(
        "parley_event_queue_length", "Events held by an event queue: quantiles over the queues", labels=["quantile"]
    )
    largest = GaugeMetricFamily(
        "parley_event_queue_length_max", "Events held by the fullest event queue", value=lengths[-1] if lengths else 0
    )
    for q in QUANTILES:
        held.add_metric([str(q)], quantile(lengths, q) if lengths else 0)
    return [queues, held, largest]
