"""Request parameter classes of /drafts, the values the actions take, and the Draft object."""

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict
from pydantic_core import PydanticCustomError

from apps.core.errors import JsonableError
from apps.core.params import Json, Params
from apps.drafts.models import Draft
from apps.messages.models import Recipient

# What a draft's `type` is: addressed to nobody yet, to a channel, or to people (direct message).
DraftType = Literal["", "stream", "private"]


@dataclass(frozen=True)
class DraftFields:
    """A draft as a client sends it (POST /drafts, PATCH /drafts/{id}), before it is checked."""

    type: str
    to: tuple[int, ...]
    topic: str
    content: str
    timestamp: float | None = None


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("string_too_short", "blank", {"min_length": 1})
    return value


# Null bytes are refused with Zulip's messages and code (BAD_REQUEST). A JsonableError raised by a
# validator is not collected by pydantic: it leaves parsing as it is, before the generic check of
# apps.core.params would name the parameter instead.
def _topic_without_null_bytes(value: str) -> str:
    if "\x00" in value:
        raise JsonableError("Topic must not contain null bytes")
    return value


def _content_without_null_bytes(value: str) -> str:
    if "\x00" in value:
        raise JsonableError("Message must not contain null bytes")
    return value


class DraftData(BaseModel):
    """One draft object of `drafts` or `draft`: exactly these keys (Zulip's DraftData)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    type: DraftType
    to: list[int]
    topic: Annotated[str, AfterValidator(_topic_without_null_bytes)]
    content: Annotated[str, AfterValidator(_not_blank), AfterValidator(_content_without_null_bytes)]
    timestamp: float | None = None  # UNIX seconds of the last edit; an integer is a float too

    def fields(self) -> DraftFields:
        return DraftFields(
            type=self.type, to=tuple(self.to), topic=self.topic, content=self.content, timestamp=self.timestamp
        )


class CreateDraftsParams(Params):
    drafts: Json[list[DraftData]]


class EditDraftParams(Params):
    draft: Json[DraftData]


# --- the Draft object -----------------------------------------------------------------------------


def draft_type(recipient: Recipient | None) -> str:
    if recipient is None:
        return ""
    return "stream" if recipient.type == Recipient.Type.STREAM else "private"


def draft_to_dict(draft: Draft, *, to: list[int]) -> dict[str, Any]:
    """Zulip's Draft object. `to`: the channel's id, or the people of a direct message other than
    the draft's owner (the owner alone for a draft to themselves), or [] for no recipient."""
    return {
        "id": draft.id,
        "type": draft_type(draft.recipient),
        "to": to,
        "topic": draft.topic,
        "content": draft.content,
        "timestamp": int(draft.last_edit_time.timestamp()),
    }
