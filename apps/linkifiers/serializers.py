"""Request parameter classes of /realm/filters and /realm/linkifiers (the Linkifier object:
apps.linkifiers.selectors.linkifier_to_dict)."""

from typing import Annotated

from pydantic import Field

from apps.core.params import Id, Json, Params
from apps.linkifiers.patterns import MAX_ALTERNATIVE_URL_TEMPLATES, LinkifierFields

# More linkifiers than an organization could have: a list longer than this is refused unread.
MAX_ORDERED_IDS = 10_000


class LinkifierParams(Params):
    """POST /realm/filters and PATCH /realm/filters/{id} (which replaces the linkifier, as Zulip's)."""

    pattern: str
    url_template: str
    example_input: str | None = None
    reverse_template: str | None = None
    # Longer lists are refused with the other checks' wording (apps.linkifiers.patterns).
    alternative_url_templates: Json[Annotated[list[str], Field(max_length=MAX_ALTERNATIVE_URL_TEMPLATES + 1)]] = Field(
        default_factory=list
    )

    def fields(self) -> LinkifierFields:
        return LinkifierFields(
            pattern=self.pattern,
            url_template=self.url_template,
            example_input=self.example_input,
            reverse_template=self.reverse_template,
            alternative_url_templates=tuple(self.alternative_url_templates),
        )


class ReorderLinkifiersParams(Params):
    ordered_linkifier_ids: Json[Annotated[list[Id], Field(max_length=MAX_ORDERED_IDS)]]


class PlaygroundParams(Params):
    """POST /realm/playgrounds (apps.linkifiers.playgrounds checks the values)."""

    name: Annotated[str, Field(max_length=1000)]
    pygments_language: Annotated[str, Field(max_length=1000)]
    url_template: Annotated[str, Field(max_length=10_000)]
