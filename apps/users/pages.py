"""The users app's HTML pages (outside /api/v1): the link that confirms a new email address.

Opening the link shows a page that confirms at once (a form it submits by itself, with a button
for browsers without JavaScript): the change is a POST, so that mail scanners that fetch links do
not use it up. Both answer a link that cannot be used with a page saying why.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View

from apps.core.auth import realm_for_request
from apps.core.errors import JsonableError
from apps.users.actions.credentials import check_confirm_email_change, pending_email_change
from apps.users.errors import EmailChangeLinkError

TEMPLATE = "users/confirm_email_change.html"


class ConfirmEmailChangeView(View):
    http_method_names = ["get", "post", "head"]

    def get(self, request: HttpRequest, key: str) -> HttpResponse:
        try:
            change = pending_email_change(key, realm_for_request(request).id, for_update=False)
        except JsonableError as exc:
            return _refused(request, exc)
        return render(request, TEMPLATE, {"state": "ask", "new_email": change.new_email, "realm": change.user.realm})

    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        try:
            change = check_confirm_email_change(key, realm_for_request(request).id)
        except JsonableError as exc:
            return _refused(request, exc)
        context = {"state": "done", "new_email": change.new_email, "realm": change.user.realm}
        return render(request, TEMPLATE, context)


def _refused(request: HttpRequest, error: JsonableError) -> HttpResponse:
    """A link of no organization here (unknown host), or one that cannot be used (EmailChangeLinkError)."""
    if not isinstance(error, EmailChangeLinkError):
        error = EmailChangeLinkError("This confirmation link is not valid.", status=404)
    return render(request, TEMPLATE, {"state": "refused", "message": error.msg}, status=error.http_status_code)
