"""Dropshot-style pagination of GET /users: `limit`, and `page_token`s that hold the scan's position.

A token is URL-safe base64 (with padding) of canonical JSON,
`{"page_start": {"after": <uuid>, "name"?: <filter>}, "sig": <signature>, "v": "v1"}`: the last user
of the previous page (users are ordered by their unique `uuid`, so a scan is a keyset scan: every
user that exists for the whole scan is seen exactly once) and the scan's parameters, which later
pages take from the token, not from the query. The signature is an HMAC of the rest with a key
derived from SECRET_KEY and the organization, so a token cannot be forged, changed, or used in
another organization. Anything but a token exactly as issued is a 400.
"""

import base64
import binascii
import json
import re
from typing import Literal
from uuid import UUID

from django.core import signing
from pydantic import BaseModel, ConfigDict, ValidationError

from apps.directory.errors import InvalidPageTokenError, InvalidQueryError
from apps.realms.models import Realm

DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
# `limit` is a uint32 in the OpenAPI document; within that, values above MAX_LIMIT are clamped.
# Read as Rust reads a u32 (Dropshot's `limit`): an optional `+`, then digits, any leading zeros.
LIMIT_RE = re.compile(r"\+?0*([0-9]{1,10})")
UINT32_MAX = 2**32 - 1
MAX_TOKEN_LENGTH = 512
TOKEN_VERSION = "v1"  # noqa: S105 (the format version, as in Dropshot)
_SEPARATOR = ":"  # between the signed text and its signature, for Signer.unsign
# The longest `name` filter: with every character taking six bytes of JSON (a control character),
# the token stays within MAX_TOKEN_LENGTH.
NAME_FILTER_MAX_LENGTH = 40


class PageStart(BaseModel):
    """Where the next page starts, and the scan's parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after: UUID
    name: str | None = None


class _Token(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    v: Literal["v1"]
    page_start: PageStart
    sig: str


def parse_limit(value: str | None) -> int:
    if value is None:
        return DEFAULT_LIMIT
    match = LIMIT_RE.fullmatch(value)
    limit = int(match[1]) if match else 0
    if not 1 <= limit <= UINT32_MAX:
        raise InvalidQueryError(
            f"limit must be an integer from 1 to {UINT32_MAX} (a page holds at most {MAX_LIMIT} items)"
        )
    return min(limit, MAX_LIMIT)


def encode_page_token(realm: Realm, start: PageStart) -> str:
    page_start = start.model_dump(mode="json", exclude_none=True)
    return _token(page_start, _signer(realm).signature(_signed_text(page_start)))


def decode_page_token(realm: Realm, token: str) -> PageStart:
    """The position and scan parameters of a token issued by encode_page_token for `realm`."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise InvalidPageTokenError("too large")
    try:
        parsed = _Token.model_validate_json(base64.urlsafe_b64decode(token.encode("ascii")))
        page_start = parsed.page_start.model_dump(mode="json", exclude_none=True)
        # Only the exact bytes we issue: no other base64 alphabet or padding, no other JSON spelling.
        if _token(page_start, parsed.sig) != token:
            raise InvalidPageTokenError("corrupted token")
        _signer(realm).unsign(f"{_signed_text(page_start)}{_SEPARATOR}{parsed.sig}")
    except (UnicodeEncodeError, binascii.Error, ValidationError, signing.BadSignature):
        raise InvalidPageTokenError("corrupted token") from None
    return parsed.page_start


def _signer(realm: Realm) -> signing.Signer:
    # A key per organization (salted with its id): a token is valid only where it was issued.
    return signing.Signer(salt=f"parley.directory.page_token:{realm.id}", sep=_SEPARATOR, algorithm="sha256")


def _signed_text(page_start: dict) -> str:
    return _canonical_json({"v": TOKEN_VERSION, "page_start": page_start})


def _token(page_start: dict, sig: str) -> str:
    body = _canonical_json({"v": TOKEN_VERSION, "page_start": page_start, "sig": sig})
    return base64.urlsafe_b64encode(body.encode()).decode()


def _canonical_json(data: dict) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
