"""The users app's HTML pages (outside /api/v1): the link that confirms a new email address, and
/avatar/{user_id_or_email}, the redirect to a person's picture.

Opening the link shows a page that confirms at once (a form it submits by itself, with a button
for browsers without JavaScript): the change is a POST, so that mail scanners that fetch links do
not use it up. Both answer a link that cannot be used with a page saying why.
"""

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views import View

from apps.core.auth import realm_for_request
from apps.core.converters import is_ascii_digits
from apps.core.errors import JsonableError, MethodNotAllowedError, error_response
from apps.core.sessions import credentials_or_session_user
from apps.users.access import (
    access_user_by_email,
    access_user_by_id,
    check_can_access_user,
    inaccessible_avatar_url,
)
from apps.users.actions.credentials import check_confirm_email_change, pending_email_change
from apps.users.errors import EmailChangeLinkError
from apps.users.selectors import avatar_url, gravatar_url

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


class AvatarRedirectView(View):
    """GET /avatar/{user_id_or_email}[/medium]: a redirect to the person's picture, as Zulip's `avatar`
    view, for clients that have an id but no `avatar_url` (the mobile app's fallback; the mobile-app
    QA pass: a 404). For someone of the organization it is their picture; for anyone else (another
    organization's id, an unknown address) Gravatar's for what was asked, as Zulip answers, so the
    answer tells nothing of who exists. The request's query string is passed on."""

    http_method_names = ["get", "head"]
    medium = False

    def get(self, request: HttpRequest, email_or_id: str) -> HttpResponse:
        try:
            url = _avatar_of(credentials_or_session_user(request), email_or_id, medium=self.medium)
        except JsonableError as error:
            return error_response(error)
        if query := request.META.get("QUERY_STRING"):
            url += f"{'&' if '?' in url else '?'}{query}"
        return HttpResponseRedirect(url)

    def http_method_not_allowed(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return error_response(MethodNotAllowedError(["GET", "HEAD"]))


def _avatar_of(requester, email_or_id: str, *, medium: bool) -> str:
    """The picture's address; 400 for what is neither an id (ASCII digits) nor an email address."""
    options = {"allow_deactivated": True, "allow_bots": True, "allow_inaccessible": True}
    by_id = is_ascii_digits(email_or_id)
    if not by_id:
        try:
            validate_email(email_or_id)
        except ValidationError:
            raise JsonableError("Invalid user ID or email address") from None
    try:
        if by_id:
            target = access_user_by_id(requester, int(email_or_id), **options)
        else:
            target = access_user_by_email(requester, email_or_id, **options)
    except JsonableError:
        return gravatar_url(email_or_id, 1, medium=medium)
    if requester.is_guest and not check_can_access_user(requester, target):
        return inaccessible_avatar_url()  # someone the guest may not see (Zulip's)
    return avatar_url(target, medium=medium)
