"""Parameters of POST /register, GET /events and DELETE /events, and the top level of their answers."""

from typing import Annotated, Any, NotRequired

from django.conf import settings
from pydantic import BeforeValidator, Field, field_validator
from pydantic_core import from_json
from typing_extensions import TypedDict

from apps.core.errors import JsonableError
from apps.core.params import IncludeSubscribers, Json, ParamError, Params
from apps.events.models import OutboxEvent

MAX_QUEUE_LIFESPAN_SECS = 7 * 24 * 3600

# What a client may ask of a queue is bounded: a queue keeps its options as long as it lives, in
# Redis and in each server process that serves its polls, and its narrow is matched against every
# message event it is sent. Zulip sets no bounds here (only the size of the request body limits
# these lists), so each is set well above what any client needs:
# - narrow terms: one term per operator is all a positive narrow can use; negated terms (leaving
#   out channels or senders) are what make a narrow long;
MAX_NARROW_TERMS = 100
# - an operand names a channel or a topic (at most 60 characters), a sender (an email address, at
#   most 254) or an `is:` state; an operator is a short word;
MAX_NARROW_PART_LENGTH = 254
# - Zulip has about 60 event types, and names them in fewer characters than an event's own column;
MAX_EVENT_TYPES = 100
MAX_EVENT_TYPE_LENGTH = OutboxEvent._meta.get_field("event_type").max_length
# - Zulip defines about 15 client capabilities, with names of a few words.
MAX_CLIENT_CAPABILITIES = 50
MAX_CLIENT_CAPABILITY_LENGTH = 64

NarrowTerm = tuple[str, str, bool]


def _parse_narrow(value: Any) -> list[NarrowTerm]:
    """Zulip's narrows: `[operator, operand]` pairs or `{"operator", "operand", "negated"}` objects."""
    if not isinstance(value, list):
        raise ParamError("narrow is not a list")
    if len(value) > MAX_NARROW_TERMS:
        raise ParamError(f"narrow has too many items (limit: {MAX_NARROW_TERMS})")
    terms: list[NarrowTerm] = []
    for index, term in enumerate(value):
        if isinstance(term, list) and len(term) == 2 and all(isinstance(part, str) for part in term):
            operator, operand, negated = term[0], term[1], False
            names = ("0", "1")
        elif isinstance(term, dict) and isinstance(term.get("operator"), str) and "operand" in term:
            negated = term.get("negated", False)
            if set(term) - {"operator", "operand", "negated"} or not isinstance(negated, bool):
                raise ParamError(f"narrow[{index}] is not a valid narrow term")
            operator, operand = term["operator"], term["operand"]
            operand = operand if isinstance(operand, str) else str(operand)
            names = ('"operator"', '"operand"')
        else:
            raise ParamError(f"narrow[{index}] is not a valid narrow term")
        for name, part in zip(names, (operator, operand), strict=True):
            if len(part) > MAX_NARROW_PART_LENGTH:
                raise ParamError(f"narrow[{index}][{name}] is too long (limit: {MAX_NARROW_PART_LENGTH} characters)")
        terms.append((operator, operand, negated))
    return terms


def _check_client_capabilities(value: Any) -> Any:
    """At most MAX_CLIENT_CAPABILITIES names of at most MAX_CLIENT_CAPABILITY_LENGTH characters (the
    message does not repeat a name that is too long)."""
    if isinstance(value, dict):
        if len(value) > MAX_CLIENT_CAPABILITIES:
            raise ParamError(f"client_capabilities has too many items (limit: {MAX_CLIENT_CAPABILITIES})")
        if any(isinstance(name, str) and len(name) > MAX_CLIENT_CAPABILITY_LENGTH for name in value):
            raise ParamError(f"client_capabilities has a name longer than {MAX_CLIENT_CAPABILITY_LENGTH} characters")
    return value


EventTypes = Annotated[list[Annotated[str, Field(max_length=MAX_EVENT_TYPE_LENGTH)]], Field(max_length=MAX_EVENT_TYPES)]


class QueueParams(Params):
    """What a client asks of a new queue (POST /register, or GET /events without queue_id)."""

    event_types: Json[EventTypes | None] = None
    narrow: Json[Annotated[list[NarrowTerm], BeforeValidator(_parse_narrow)]] = Field(default_factory=list)
    all_public_streams: Json[bool] = False
    apply_markdown: Json[bool] = False
    client_gravatar: Json[bool] = True
    slim_presence: Json[bool] = False
    include_subscribers: IncludeSubscribers = "false"
    client_capabilities: Json[Annotated[dict[str, bool], BeforeValidator(_check_client_capabilities)]] = Field(
        default_factory=dict
    )
    queue_lifespan_secs: Json[Annotated[int, Field(ge=0, le=MAX_QUEUE_LIFESPAN_SECS)]] = 0
    # How long the queue lives without being polled: "mobile" (a phone's app, which polls only while
    # it is open) or a number of seconds; takes precedence over queue_lifespan_secs.
    idle_queue_timeout: str | None = None

    def requested_lifespan_secs(self) -> int:
        """The queue's lifespan the client asked for; 0: the server's default."""
        raw = self.idle_queue_timeout
        if raw is None:
            return self.queue_lifespan_secs
        if raw == "mobile":
            return settings.EVENT_QUEUE_MOBILE_LIFESPAN_SECONDS
        try:
            value = from_json(raw)
        except ValueError:
            value = None
        if value == "mobile":
            return settings.EVENT_QUEUE_MOBILE_LIFESPAN_SECONDS
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_QUEUE_LIFESPAN_SECS:
            raise JsonableError("Invalid idle_queue_timeout")
        return value


class RegisterParams(QueueParams):
    fetch_event_types: Json[EventTypes | None] = None


class GetEventsParams(QueueParams):
    queue_id: str | None = None
    last_event_id: Json[int] | None = None
    dont_block: Json[bool] = False
    # GET /events names the lifespan differently when it creates a queue.
    lifespan_secs: Json[Annotated[int, Field(ge=0, le=MAX_QUEUE_LIFESPAN_SECS)]] = 0


class DeleteQueueParams(Params):
    queue_id: str

    @field_validator("queue_id")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value:
            raise ParamError("queue_id cannot be blank")
        return value


# --- answers: the OpenAPI document's success schemas (apps/core/openapi.py) ------------------------


class RegisterAnswer(TypedDict):
    """POST /register's top level; the state of the fetched event types sits beside these."""

    queue_id: str | None
    last_event_id: int
    zulip_feature_level: int
    zulip_version: str
    zulip_merge_base: str
    idle_queue_timeout_secs: NotRequired[int]


class EventShape(TypedDict):
    """An event: its id in the queue and its type; the type's own fields sit beside them."""

    id: int
    type: str


class EventsAnswer(TypedDict):
    events: list[EventShape]
    queue_id: NotRequired[str]
