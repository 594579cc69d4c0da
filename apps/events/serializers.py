"""Parameters of POST /register, GET /events and DELETE /events."""

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator

from apps.core.params import Json, ParamError, Params

MAX_QUEUE_LIFESPAN_SECS = 7 * 24 * 3600
NarrowTerm = tuple[str, str, bool]


def _parse_narrow(value: Any) -> list[NarrowTerm]:
    """Zulip's narrows: `[operator, operand]` pairs or `{"operator", "operand", "negated"}` objects."""
    if not isinstance(value, list):
        raise ParamError("narrow is not a list")
    terms: list[NarrowTerm] = []
    for index, term in enumerate(value):
        if isinstance(term, list) and len(term) == 2 and all(isinstance(part, str) for part in term):
            terms.append((term[0], term[1], False))
        elif isinstance(term, dict) and isinstance(term.get("operator"), str) and "operand" in term:
            negated = term.get("negated", False)
            if set(term) - {"operator", "operand", "negated"} or not isinstance(negated, bool):
                raise ParamError(f"narrow[{index}] is not a valid narrow term")
            operand = term["operand"]
            terms.append((term["operator"], operand if isinstance(operand, str) else str(operand), negated))
        else:
            raise ParamError(f"narrow[{index}] is not a valid narrow term")
    return terms


def _true_false_or_partial(value: Any) -> str:
    """`include_subscribers`: JSON true/false (the same text as the raw strings), or "partial"."""
    if value in ("true", "false", "partial"):
        return value
    raise ParamError("Invalid include_subscribers")


class QueueParams(Params):
    """What a client asks of a new queue (POST /register, or GET /events without queue_id)."""

    event_types: Json[list[str] | None] = None
    narrow: Json[Annotated[list[NarrowTerm], BeforeValidator(_parse_narrow)]] = Field(default_factory=list)
    all_public_streams: Json[bool] = False
    apply_markdown: Json[bool] = False
    client_gravatar: Json[bool] = True
    slim_presence: Json[bool] = False
    include_subscribers: Annotated[str, BeforeValidator(_true_false_or_partial)] = "false"
    client_capabilities: Json[dict[str, bool]] = Field(default_factory=dict)
    queue_lifespan_secs: Json[Annotated[int, Field(ge=0, le=MAX_QUEUE_LIFESPAN_SECS)]] = 0


class RegisterParams(QueueParams):
    fetch_event_types: Json[list[str] | None] = None


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
