"""REST framework's content negotiation for our APIs: the answer is JSON whatever the request's
Accept header says, as Zulip's and Dropshot's servers answer. REST framework's default refuses an
Accept header its renderers cannot satisfy (406 for a browser's `text/html`) and parses the header
on every request; bodies are still parsed by their Content-Type."""

from rest_framework.negotiation import DefaultContentNegotiation


class JsonContentNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        renderer = renderers[0]
        return renderer, renderer.media_type
