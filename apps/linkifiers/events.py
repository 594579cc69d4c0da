"""Linkifiers' part of the event system. Clients that registered with the
`linkifier_url_template` capability get `realm_linkifiers` (state and events); the others an empty
`realm_linkifiers` and no events, as Zulip gives clients that do not know URL templates; the legacy
`realm_filters` is empty for all (Zulip's since feature level 176). And the code playgrounds,
`realm_playgrounds`."""

from apps.events.registry import QueueOptions, StateContext, event_filter, initial_state
from apps.linkifiers.playgrounds import playgrounds_for_realm
from apps.linkifiers.selectors import linkifiers_for_realm


def takes_url_templates(options: QueueOptions) -> bool:
    return bool(options.client_capabilities.get("linkifier_url_template", False))


@initial_state("realm_linkifiers")
def realm_linkifiers_state(context: StateContext) -> dict:
    if not takes_url_templates(context.options):
        return {"realm_linkifiers": []}
    return {"realm_linkifiers": linkifiers_for_realm(context.user.realm_id)}


@initial_state("realm_filters")
def realm_filters_state(context: StateContext) -> dict:
    return {"realm_filters": []}


@initial_state("realm_playgrounds")
def realm_playgrounds_state(context: StateContext) -> dict:
    return {"realm_playgrounds": playgrounds_for_realm(context.user.realm_id)}


@event_filter("realm_linkifiers")
def linkifiers_for_modern_clients(event: dict, options: QueueOptions) -> bool:
    return takes_url_templates(options)
