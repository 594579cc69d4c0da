"""The sign-in pages' forms. Each field is checked as the actions check it (an email address, a name,
Django's password validators), so that a person sees every problem next to its field at once."""

from django import forms
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.password_validation import password_validators_help_texts, validate_password
from django.core.validators import MaxLengthValidator

from apps.core.errors import JsonableError
from apps.realms.models import Realm
from apps.users.actions.create_user import check_email, check_full_name
from apps.users.models import BotService, BotType, User
from apps.users.selectors import delivery_email_in_use

MAX_PASSWORD_LENGTH = User.MAX_PASSWORD_LENGTH


class JoinForm(forms.Form):
    email = forms.EmailField(label="Email address", max_length=254)
    full_name = forms.CharField(label="Full name", max_length=User.MAX_NAME_LENGTH)
    password = forms.CharField(
        label="Password", strip=False, max_length=MAX_PASSWORD_LENGTH, widget=forms.PasswordInput
    )

    def __init__(self, realm: Realm, *args, email: str | None = None, **kwargs) -> None:
        """With `email` (an invitation sent to it), the address is that one, not the visitor's."""
        super().__init__(*args, **kwargs)
        self.realm = realm
        self.fields["password"].help_text = " ".join(password_validators_help_texts())
        if email is not None:
            self.fields["email"].disabled = True
            self.fields["email"].initial = email

    def clean_email(self) -> str:
        try:
            email = check_email(self.cleaned_data["email"])
        except JsonableError as exc:
            raise forms.ValidationError(exc.msg) from None
        if delivery_email_in_use(self.realm, email):
            raise forms.ValidationError(
                f"An account with this email address already exists in {self.realm.name}: log in instead."
            )
        return email

    def clean_full_name(self) -> str:
        try:
            return check_full_name(self.cleaned_data["full_name"])
        except JsonableError as exc:
            raise forms.ValidationError(exc.msg) from None

    def clean(self) -> dict:
        data = super().clean()
        password = data.get("password")
        if password is not None:
            person = User(realm=self.realm, delivery_email=data.get("email", ""), full_name=data.get("full_name", ""))
            try:
                validate_password(password, person)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data


class LoginForm(forms.Form):
    email = forms.CharField(label="Email address", max_length=254)
    password = forms.CharField(
        label="Password", strip=False, max_length=MAX_PASSWORD_LENGTH, widget=forms.PasswordInput
    )


class ConfirmPasswordForm(forms.Form):
    password = forms.CharField(
        label="Your password", strip=False, max_length=MAX_PASSWORD_LENGTH, widget=forms.PasswordInput
    )


class BotForm(forms.Form):
    """A bot of one's own, as POST /bots makes it (apps.bots.actions.check_create_bot checks every
    field): its kind among those the user may make, and an outgoing webhook bot's service."""

    full_name = forms.CharField(label="Name", max_length=User.MAX_NAME_LENGTH)
    short_name = forms.CharField(
        label="Username", max_length=100, help_text="Its email address becomes <username>-bot@… (letters, digits, -)."
    )
    bot_type = forms.TypedChoiceField(label="Kind", coerce=int)
    payload_url = forms.CharField(
        label="Endpoint URL",
        required=False,
        max_length=BotService._meta.get_field("base_url").max_length,
        help_text=(
            "Outgoing webhook bots only: where the messages that mention it, or are sent to it, are posted. "
            "Addresses on private networks (this machine's included) are refused when a message is delivered, "
            "unless the server's administrator allows them."
        ),
    )
    interface_type = forms.TypedChoiceField(
        label="Payload format",
        coerce=int,
        choices=[(BotService.Interface.GENERIC, "Zulip"), (BotService.Interface.SLACK, "Slack compatible")],
        initial=BotService.Interface.GENERIC,
    )

    def __init__(self, allowed_types: list[int], *args, **kwargs) -> None:
        super().__init__(*args, label_suffix="", **kwargs)  # labels as the other pages' (no colon)
        self.fields["bot_type"].choices = [(kind, BotType(kind).label) for kind in allowed_types]


class PasswordResetForm(forms.Form):
    email = forms.CharField(label="Email address", max_length=254)


class NewPasswordForm(SetPasswordForm):
    """Django's form setting a new password (typed twice, through the validators), with the length
    limit of the other password fields."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.max_length = MAX_PASSWORD_LENGTH
            field.validators.append(MaxLengthValidator(MAX_PASSWORD_LENGTH))
            field.widget.attrs["maxlength"] = str(MAX_PASSWORD_LENGTH)
        self.fields["new_password1"].help_text = " ".join(password_validators_help_texts())
