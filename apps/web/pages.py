"""The sign-in pages: server-rendered HTML without JavaScript, with Django's sessions and CSRF
protection. Whoever opens an invitation link signs up (/join/<key>/) and lands, logged in, on their
account page (/account/: their API email and key, a zuliprc and a curl line, a button to rotate the
key, a button to log out); /login/ brings them back there. The key is shown to a browser whose
person typed their password in the last minutes (logging in, signing up, or on the page itself), as
Zulip asks for it before showing a key: a session left open, or stolen, does not give the key away.

Every page belongs to the organization of the request's host: a session of another organization's
user is no session here, and an unknown host is a page saying so. A link that cannot be used
(unknown, another organization's, expired, revoked) is one page, whatever the reason. Logging in
counts each attempt against the address, in the limit POST /fetch_api_key uses.
"""

import math
import shlex
import time

from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.password_validation import password_validators_help_texts
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils.decorators import method_decorator
from django.utils.safestring import mark_safe
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie

from apps.bots.actions import check_create_bot
from apps.bots.selectors import allowed_bot_types
from apps.core.auth import realm_for_request
from apps.core.errors import (
    REDIS_UNAVAILABLE,
    InvalidSubdomainError,
    JsonableError,
    RateLimitedError,
    ServiceUnavailableError,
)
from apps.core.sessions import session_user
from apps.invites.actions.signup import do_join_with_invite
from apps.invites.errors import InvalidInvitationLinkError
from apps.invites.models import EmailInvitation
from apps.invites.selectors import (
    can_create_multiuse_invite,
    can_invite_users_by_email,
    invitable_roles,
    usable_invite_by_key,
)
from apps.realms.models import Realm
from apps.realms.selectors import rendered_realm_description
from apps.users.actions.password_reset import (
    PasswordResetLinkError,
    check_request_password_reset,
    do_reset_password,
    password_reset_user,
)
from apps.users.actions.user_settings import do_regenerate_api_key
from apps.users.backends import check_password_login
from apps.users.errors import EmailInUseError
from apps.users.models import User
from apps.users.selectors import active_bots_with_services, api_email
from apps.web.forms import BotForm, ConfirmPasswordForm, JoinForm, LoginForm, NewPasswordForm, PasswordResetForm

# The backend that keeps a session's user (RealmEmailBackend.get_user).
SESSION_BACKEND = "apps.users.backends.RealmEmailBackend"
# When the session's person last typed their password (seconds since the epoch), and for how long
# that shows their API key.
PASSWORD_TYPED_AT = "parley_password_typed_at"  # noqa: S105 (a session key's name)
KEY_SHOWN_FOR_SECONDS = 15 * 60


def _log_in(request: HttpRequest, user) -> None:
    """Log `user` in, who just typed their password."""
    login(request, user, backend=SESSION_BACKEND)
    request.session[PASSWORD_TYPED_AT] = time.time()


def _password_refused(exc: Exception) -> tuple[str, int]:
    """What a page says, and its status, when check_password_login refuses."""
    if isinstance(exc, RateLimitedError):
        return f"Too many attempts! Try again in {max(math.ceil(exc.retry_after), 1)} seconds.", 429
    if isinstance(exc, (ServiceUnavailableError, *REDIS_UNAVAILABLE)):
        return "Passwords cannot be checked right now; try again soon.", 503
    return exc.msg, 401


def _realm(request: HttpRequest) -> Realm | None:
    try:
        return realm_for_request(request)
    except InvalidSubdomainError:
        return None


def _no_organization(request: HttpRequest) -> HttpResponse:
    return render(request, "web/no_organization.html", status=404)


def _unusable_link(request: HttpRequest, realm: Realm) -> HttpResponse:
    return render(request, "web/invalid_link.html", {"realm": realm}, status=404)


@method_decorator(never_cache, name="dispatch")
class JoinView(View):
    """GET shows the sign-up form of a usable link; POST creates the account and logs it in."""

    http_method_names = ["get", "post", "head"]

    def dispatch(self, request: HttpRequest, key: str) -> HttpResponse:
        """Either method, for a usable link of the host's organization only."""
        self.realm = _realm(request)
        if self.realm is None:
            return _no_organization(request)
        self.invite = usable_invite_by_key(self.realm, key)
        if self.invite is None or self.realm.deactivated:
            return _unusable_link(request, self.realm)
        return super().dispatch(request, key)

    def get(self, request: HttpRequest, key: str) -> HttpResponse:
        return self._form(request, self.realm, self.invite, self._join_form())

    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        realm, invite = self.realm, self.invite
        form = self._join_form(request.POST)
        if not form.is_valid():
            return self._form(request, realm, invite, form, status=400)
        try:
            user = do_join_with_invite(realm, key, **form.cleaned_data)
        except InvalidInvitationLinkError:
            return _unusable_link(request, realm)  # revoked or expired meanwhile
        except EmailInUseError:
            form.add_error("email", f"An account with this email address already exists in {realm.name}.")
            return self._form(request, realm, invite, form, status=400)
        except JsonableError as exc:
            form.add_error(None, exc.msg)
            return self._form(request, realm, invite, form, status=400)
        _log_in(request, user)
        messages.success(request, f"Welcome to {realm.name}! Your account is ready.")
        return redirect("account")

    def _join_form(self, data=None) -> JoinForm:
        """The sign-up form; for an invitation sent by email, with its address (not to be changed)."""
        email = self.invite.email if isinstance(self.invite, EmailInvitation) else None
        return JoinForm(self.realm, data, email=email)

    def _form(self, request, realm, invite, form, *, status: int = 200) -> HttpResponse:
        context = {"realm": realm, "role": invite.get_invited_as_display(), "form": form}
        return render(request, "web/join.html", context, status=status)


def _login_page(request: HttpRequest, realm: Realm, form: LoginForm, *, status: int = 200, **context) -> HttpResponse:
    """The login page, with the organization's description (rendered, as Zulip shows it there)."""
    description = mark_safe(rendered_realm_description(realm))  # noqa: S308 (cleaned as a message is)
    context = {"realm": realm, "form": form, "description": description, **context}
    return render(request, "web/login.html", context, status=status)


@method_decorator(never_cache, name="dispatch")
class LoginView(View):
    http_method_names = ["get", "post", "head"]

    def get(self, request: HttpRequest) -> HttpResponse:
        realm = _realm(request)
        if realm is None:
            return _no_organization(request)
        if session_user(request, realm) is not None:
            return redirect("app")
        # Sent here by the web app whose session ended (?session_ended): said why (the web admin QA
        # pass: a deactivated person's open tab showed the login page with no word).
        return _login_page(request, realm, LoginForm(), session_ended="session_ended" in request.GET)

    def post(self, request: HttpRequest) -> HttpResponse:
        realm = _realm(request)
        if realm is None:
            return _no_organization(request)
        form = LoginForm(request.POST)
        if not form.is_valid():
            return _login_page(request, realm, form, status=400)
        try:
            email, password = form.cleaned_data["email"], form.cleaned_data["password"]
            user = check_password_login(realm, email, password, address=request.META.get("REMOTE_ADDR"))
        except (JsonableError, *REDIS_UNAVAILABLE) as exc:
            message, status = _password_refused(exc)
            if status == 503:
                message = "Logging in is not possible right now; try again soon."
            form.add_error(None, message)
            return _login_page(request, realm, form, status=status)
        _log_in(request, user)
        return redirect("app")


class LoggedInPage(View):
    """A page of the user logged in to the host's organization; a browser that is not is sent to log in."""

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        # A method the page does not take is said, with or without a session (TRACE / and OPTIONS /
        # were sent to log in: the operator QA pass).
        if request.method.lower() not in self.http_method_names:
            return super().dispatch(request, *args, **kwargs)
        self.realm = _realm(request)
        if self.realm is None:
            return _no_organization(request)
        self.user = session_user(request, self.realm)
        if self.user is None:
            return redirect("login")
        return super().dispatch(request, *args, **kwargs)


# The app's own scripts only: should a message's HTML (sanitized by the server) ever carry a script,
# it would not run. Style attributes are allowed (a channel's colour is one); images may come from
# anywhere, as in the messages that show them.
APP_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https: http:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def invitations_offered(user: User) -> dict | None:
    """What the app's "Invite people" panel offers this user (None: no panel): invitations by email
    and reusable links as the organization lets them send each, as the roles they may give."""
    by_email, by_link = can_invite_users_by_email(user), can_create_multiuse_invite(user)
    if not (by_email or by_link):
        return None
    return {"by_email": by_email, "by_link": by_link, "roles": invitable_roles(user)}


# The notification settings the app's settings panel offers (notification_settings.js), as the
# server acts on them (apps/email_notifications, apps/push).
NOTIFICATION_SETTINGS = (
    ("enable_offline_email_notifications", "Email me about direct messages and mentions"),
    ("enable_followed_topic_email_notifications", "Email me about new messages in topics I follow"),
    ("enable_stream_email_notifications", "Email me about every new message in my channels"),
    ("enable_offline_push_notifications", "Notify my phones of direct messages and mentions"),
    ("enable_followed_topic_push_notifications", "Notify my phones of new messages in topics I follow"),
    ("enable_stream_push_notifications", "Notify my phones of every new message in my channels"),
    ("wildcard_mentions_notify", "Count @all and @channel mentions as mentions of me"),
)


@method_decorator(never_cache, name="dispatch")
@method_decorator(ensure_csrf_cookie, name="dispatch")
class AppView(LoggedInPage):
    """The web app (/): a page whose script (static/web/) talks to the API under /json/ with this
    browser's session, sending the CSRF token the page carries."""

    http_method_names = ["get", "head"]

    def get(self, request: HttpRequest) -> HttpResponse:
        # The rules a new password follows, beside its field (the newcomer QA pass: a refusal said
        # only "New password is too weak!", where the join page lists them).
        context = {
            "realm": self.realm,
            "user": self.user,
            "password_rules": " ".join(password_validators_help_texts()),
            "invite": invitations_offered(self.user),
            "notification_settings": NOTIFICATION_SETTINGS,
        }
        response = render(request, "web/app.html", context)
        response["Content-Security-Policy"] = APP_CSP
        return response


@method_decorator(never_cache, name="dispatch")
class AccountView(LoggedInPage):
    """The logged-in user's API credentials, as a client needs them; POST, their password, which
    shows them (for KEY_SHOWN_FOR_SECONDS, in this browser)."""

    http_method_names = ["get", "head", "post"]

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._page(request, ConfirmPasswordForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = ConfirmPasswordForm(request.POST)
        if not form.is_valid():
            return self._page(request, form, status=400)
        try:
            address = request.META.get("REMOTE_ADDR")
            check_password_login(self.realm, self.user.delivery_email, form.cleaned_data["password"], address=address)
        except (JsonableError, *REDIS_UNAVAILABLE) as exc:
            message, status = _password_refused(exc)
            form.add_error(None, "Your password is incorrect." if status == 401 else message)
            return self._page(request, form, status=status)
        request.session[PASSWORD_TYPED_AT] = time.time()
        return redirect("account")

    def _page(
        self, request: HttpRequest, form: ConfirmPasswordForm, *, bot_form: BotForm | None = None, status: int = 200
    ) -> HttpResponse:
        realm, user = self.realm, self.user
        email = api_email(user)
        context = {"realm": realm, "user": user, "api_email": email, "form": form}
        if self._keys_shown(request):
            context |= {
                "api_key": user.api_key,
                "zuliprc": zuliprc(email, user.api_key, realm.url),
                # Quoted for a shell where needed (an address may hold & or ': the hostile QA pass).
                "curl": f"curl -u {shlex.quote(f'{email}:{user.api_key}')} {realm.url}/api/v1/users/me",
                "bots": [_bot_files(bot, realm.url) for bot in active_bots_with_services(user)],
                # Made here too (the bots QA pass: only the API made a bot), as the user may.
                "bot_form": bot_form or (BotForm(kinds) if (kinds := allowed_bot_types(user)) else None),
            }
        return render(request, "web/account.html", context, status=status)

    def _keys_shown(self, request: HttpRequest) -> bool:
        """Whether the page shows keys: the password typed lately, or none to ask for (no password
        logins, as Zulip, which asks only then)."""
        typed_at = request.session.get(PASSWORD_TYPED_AT, 0)
        return not self.realm.password_auth_enabled or time.time() - typed_at < KEY_SHOWN_FOR_SECONDS


# check_create_bot's refusals (Zulip's API words) as the account page's form says them.
BOT_REFUSALS = {
    "Email is already in use.": ("short_name", "A bot or person already has this username's address: choose another."),
    "Bad name or username": ("short_name", "Use letters, digits and - only."),
    "Name is already in use.": ("full_name", "Someone in the organization already has this name."),
    "Name too short!": ("full_name", "Give the bot a name."),
    "Missing 'payload_url' argument": ("payload_url", "An outgoing webhook bot needs the URL of its service."),
    "Invalid payload_url: Value error, Not a URL": ("payload_url", "Not a URL: it begins with http:// or https://."),
}


class CreateBotView(AccountView):
    """POST: a bot of the user's own (BotForm), then the account page with its files; refused, the
    page again with why."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        if not self._keys_shown(request):  # the form is on the page only then, as the new bot's key
            messages.info(request, "Type your password again to make a bot.")
            return redirect("account")
        kinds = allowed_bot_types(self.user)
        if not kinds:  # (the verify QA pass: "Select a valid choice" was all it said)
            messages.error(request, "Your organization does not let you make bots.")
            return redirect("account")
        form = BotForm(kinds, request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                bot = check_create_bot(
                    self.user,
                    full_name=data["full_name"],
                    short_name=data["short_name"],
                    bot_type=data["bot_type"],
                    payload_url=data["payload_url"],
                    interface_type=data["interface_type"],
                )
            except JsonableError as exc:
                # Beside its field, in the form's words (the verify QA pass: "Email is already in
                # use." at the top, of a form with no email field).
                field, text = BOT_REFUSALS.get(exc.msg, (None, exc.msg))
                form.add_error(field, text)
            else:
                messages.success(request, f"{bot.full_name} was made: its zuliprc is below.")
                return redirect("account")
        return self._page(request, ConfirmPasswordForm(), bot_form=form, status=400)


def zuliprc(email: str, api_key: str, site: str) -> str:
    return f"[api]\nemail={email}\nkey={api_key}\nsite={site}\n"


def _bot_files(bot, site: str) -> dict:
    """A bot's zuliprc, and for a bot served by zulip-botserver its section of a botserverrc (its
    outgoing webhook's token), as Zulip's settings offer them."""
    files = {"bot": bot, "zuliprc": zuliprc(bot.delivery_email, bot.api_key, site)}
    if service := next(iter(bot.services.all()), None):
        files["botserverrc"] = (
            f"[{service.name}]\nemail={bot.delivery_email}\nkey={bot.api_key}\nsite={site}\ntoken={service.token}\n"
        )
    return files


@method_decorator(never_cache, name="dispatch")
class RegenerateApiKeyView(LoggedInPage):
    """POST: a new API key for the logged-in user; the old one stops working at once."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        do_regenerate_api_key(self.user, acting_user=self.user)
        messages.success(request, "Your API key was replaced: the old one no longer works.")
        return redirect("account")


class LogoutView(View):
    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        logout(request)
        messages.info(request, "You are logged out.")
        return redirect("login")


# --- a forgotten password (apps.users.actions.password_reset) ---------------------------------------


@method_decorator(never_cache, name="dispatch")
class PasswordResetView(View):
    """GET asks for an address; POST has the answer emailed and says so, whatever the address."""

    http_method_names = ["get", "post", "head"]

    def dispatch(self, request: HttpRequest) -> HttpResponse:
        self.realm = _realm(request)
        if self.realm is None:
            return _no_organization(request)
        return super().dispatch(request)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._form(request, PasswordResetForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = PasswordResetForm(request.POST)
        if not form.is_valid():
            return self._form(request, form, status=400)
        try:
            check_request_password_reset(self.realm, form.cleaned_data["email"], ip=request.META.get("REMOTE_ADDR", ""))
        except RateLimitedError as exc:
            minutes = max(math.ceil(exc.retry_after / 60), 1)
            form.add_error(None, f"Too many password reset emails asked for! Try again in {minutes} minutes.")
            return self._form(request, form, status=429)
        except REDIS_UNAVAILABLE:
            form.add_error(None, "Resetting passwords is not possible right now; try again soon.")
            return self._form(request, form, status=503)
        except JsonableError as exc:
            form.add_error("email" if exc.msg == "Invalid address." else None, exc.msg)
            return self._form(request, form, status=400)
        return redirect("password_reset_sent")

    def _form(self, request: HttpRequest, form: PasswordResetForm, *, status: int = 200) -> HttpResponse:
        return render(request, "web/password_reset.html", {"realm": self.realm, "form": form}, status=status)


@method_decorator(never_cache, name="dispatch")
class PasswordResetSentView(View):
    http_method_names = ["get", "head"]

    def get(self, request: HttpRequest) -> HttpResponse:
        realm = _realm(request)
        if realm is None:
            return _no_organization(request)
        return render(request, "web/password_reset.html", {"realm": realm, "sent": True})


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's: the link's token is kept in the session and the browser sent on to a page without
    it (no address with the token leaks through a Referer); that page sets the new password. Only
    for a person of the host's organization; then they log in with it."""

    template_name = "web/password_reset_confirm.html"
    form_class = NewPasswordForm
    success_url = reverse_lazy("login")

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        self.realm = _realm(request)
        if self.realm is None:
            return _no_organization(request)
        response = super().dispatch(request, *args, **kwargs)
        if response.status_code == 200 and not self.validlink:
            response.status_code = 404
        return response

    def get_user(self, uidb64: str):
        return password_reset_user(self.realm, uidb64)

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "realm": self.realm}

    def form_valid(self, form: NewPasswordForm) -> HttpResponse:
        token = self.request.session.pop(auth_views.INTERNAL_RESET_SESSION_TOKEN)
        try:
            do_reset_password(self.user, token, form.cleaned_data["new_password1"])
        except PasswordResetLinkError:  # used meanwhile, by another request
            self.validlink = False
            return self.render_to_response(self.get_context_data(form=form), status=404)
        messages.success(self.request, "Your password was changed. Log in with it.")
        return redirect(self.success_url)

    def form_invalid(self, form: NewPasswordForm) -> HttpResponse:
        return self.render_to_response(self.get_context_data(form=form), status=400)
