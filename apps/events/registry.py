"""What each app contributes to the event system: initial state for POST /register, and how an
event is adapted to one queue's options when it is delivered.

Apps register from their own `events.py`, which the events app imports at start-up; several apps
may contribute keys to one fetch type (apps.groups adds the organization's group settings to "realm"):

    @initial_state("realm_user")
    def fetch_realm_user_state(context: StateContext) -> dict: ...

    @event_transform("realm_user")
    def adapt(event: dict, options: QueueOptions) -> dict: ...
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

StateFetcher = Callable[["StateContext"], dict[str, Any]]
# A transform returns the event as the queue's client takes it: one event, or several (for clients
# that cannot take it at once; they share the stored event's id, acknowledged together).
EventTransform = Callable[[dict[str, Any], "QueueOptions"], dict[str, Any] | list[dict[str, Any]]]

EventFilter = Callable[[dict[str, Any], "QueueOptions"], bool]

_state_fetchers: dict[str, list[StateFetcher]] = {}
_transforms: dict[str, EventTransform] = {}
_filters: dict[str, EventFilter] = {}
_registration_hooks: list[Callable[[Any, "QueueOptions"], None]] = []


@dataclass(frozen=True)
class QueueOptions:
    """How a client registered: what it receives and in which form."""

    event_types: frozenset[str] | None = None  # None: every type
    narrow: tuple[tuple[str, str, bool], ...] = ()
    apply_markdown: bool = False
    client_gravatar: bool = True
    all_public_streams: bool = False
    slim_presence: bool = False
    include_subscribers: str = "false"
    client_capabilities: dict[str, bool] = field(default_factory=dict)
    lifespan_secs: int = 600

    def wants(self, event_type: str) -> bool:
        return self.event_types is None or event_type in self.event_types

    def to_json(self) -> dict[str, Any]:
        return {
            "event_types": sorted(self.event_types) if self.event_types is not None else None,
            "narrow": [list(term) for term in self.narrow],
            "apply_markdown": self.apply_markdown,
            "client_gravatar": self.client_gravatar,
            "all_public_streams": self.all_public_streams,
            "slim_presence": self.slim_presence,
            "include_subscribers": self.include_subscribers,
            "client_capabilities": self.client_capabilities,
            "lifespan_secs": self.lifespan_secs,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "QueueOptions":
        types = data.get("event_types")
        return cls(
            event_types=frozenset(types) if types is not None else None,
            narrow=tuple(tuple(term) for term in data.get("narrow", [])),
            apply_markdown=data.get("apply_markdown", False),
            client_gravatar=data.get("client_gravatar", True),
            all_public_streams=data.get("all_public_streams", False),
            slim_presence=data.get("slim_presence", False),
            include_subscribers=data.get("include_subscribers", "false"),
            client_capabilities=data.get("client_capabilities", {}),
            lifespan_secs=data.get("lifespan_secs", 600),
        )


@dataclass(frozen=True)
class StateContext:
    """What a state fetcher knows about the registering client."""

    user: Any  # apps.users.models.User
    options: QueueOptions
    fetch_types: frozenset[str] | None = None  # what the client asked state of; None: everything
    # What the fetchers of one register read that another needs too (the channels the user can
    # see, ...): `once` reads it for the first and keeps it for the others.
    kept: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def fetches(self, fetch_type: str) -> bool:
        return self.fetch_types is None or fetch_type in self.fetch_types

    def once(self, key: str, read: Callable[[], Any]) -> Any:
        """`read()`'s answer, read at most once per register (fetchers sharing it agree on `key`)."""
        if key not in self.kept:
            self.kept[key] = read()
        return self.kept[key]


def initial_state(fetch_type: str) -> Callable[[StateFetcher], StateFetcher]:
    """Register a function that returns keys of `fetch_type` in the POST /register response."""

    def decorator(fetcher: StateFetcher) -> StateFetcher:
        fetchers = _state_fetchers.setdefault(fetch_type, [])
        if fetcher in fetchers:
            raise ValueError(f"{fetcher.__qualname__} is registered twice for the {fetch_type!r} state")
        fetchers.append(fetcher)
        return fetcher

    return decorator


def event_transform(event_type: str) -> Callable[[EventTransform], EventTransform]:
    """Register how events of `event_type` are adapted to a queue's options when delivered."""

    def decorator(transform: EventTransform) -> EventTransform:
        _transforms[event_type] = transform
        return transform

    return decorator


def event_filter(event_type: str) -> Callable[[EventFilter], EventFilter]:
    """Register which events of `event_type` a queue shows its client (e.g. those its narrow
    matches). Events not shown stay in the queue until the client acknowledges a later one."""

    def decorator(keep: EventFilter) -> EventFilter:
        _filters[event_type] = keep
        return keep

    return decorator


def shows_event(event: dict[str, Any], options: QueueOptions) -> bool:
    keep = _filters.get(event["type"])
    return keep is None or keep(event, options)


def on_queue_registered(hook: Callable[[Any, QueueOptions], None]) -> Callable[[Any, QueueOptions], None]:
    """Register `hook(user, options)`, called when a user registers a queue (before its initial
    state is read), for apps that route events by how queues registered."""
    _registration_hooks.append(hook)
    return hook


def queue_registered(user: Any, options: QueueOptions) -> None:
    for hook in _registration_hooks:
        hook(user, options)


def fetch_types() -> list[str]:
    return list(_state_fetchers)


def fetch_initial_state(context: StateContext, types: list[str] | None) -> dict[str, Any]:
    """The state of the requested fetch types (all registered ones when `types` is None)."""
    state: dict[str, Any] = {}
    for fetch_type in types if types is not None else list(_state_fetchers):
        for fetcher in _state_fetchers.get(fetch_type, ()):  # unknown types are ignored, as in Zulip
            state.update(fetcher(context))
    return state


def adapt_event(
    event: dict[str, Any], options: QueueOptions, queue_id: str | None = None
) -> dict[str, Any] | list[dict[str, Any]]:
    """The event as this queue's client receives it. An event may carry "sender_queue_id": then
    only that queue's client also receives its "local_message_id" (Zulip's echo of the sending
    client's local id, so it can match the event to what it sent)."""
    transform = _transforms.get(event["type"])
    event = transform(event, options) if transform is not None else event
    if isinstance(event, dict) and "sender_queue_id" in event:
        event = dict(event)
        if event.pop("sender_queue_id") != queue_id:
            event.pop("local_message_id", None)
    return event


def adapt_events(events: list[dict[str, Any]], options: QueueOptions, queue_id: str) -> list[dict[str, Any]]:
    """The events of a GET /events answer, each as this queue's client receives it."""
    result: list[dict[str, Any]] = []
    for event in events:
        adapted = adapt_event(event, options, queue_id)
        result.extend(adapted if isinstance(adapted, list) else [adapted])
    return result
