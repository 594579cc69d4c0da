"""PATCH /settings: a person's own settings (USER_SETTINGS), name, password and email; and others'
settings, changed in bulk by administrators (`target_users`) and operators (change_user_settings).

Every value is checked before anything is written, so one refused value refuses the whole request.
The settings of one user are written in one UPDATE (users given the same changes share it); each
changed value is in the audit log (USER_SETTING_CHANGED: what "already edited" is read from) and
sent to the user's own queues as a `user_settings` event.
"""

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from apps.core.errors import JsonableError, OrganizationAdministratorRequiredError
from apps.events.publish import forget_credentials_on_commit, send_event_on_commit
from apps.realms.audit import audit_all, audit_entry, changed
from apps.realms.models import AuditLogEventType, Realm
from apps.users.actions.create_user import check_full_name
from apps.users.actions.credentials import check_email_change, check_new_password, do_start_email_change
from apps.users.actions.notify import send_email_visibility_update, send_person_update
from apps.users.actions.user_settings import do_change_full_name
from apps.users.hooks import settings_target_members, user_settings_changed
from apps.users.models import User
from apps.users.selectors import access_humans_by_ids, active_humans_among, api_email, users_who_changed_setting
from apps.users.settings_models import USER_SETTINGS, validate_settings
from apps.users.settings_values import language_name

CANNOT_CHANGE_FOR_OTHERS = "Cannot change this setting for other users."


@dataclass(frozen=True)
class TargetUsers:
    """Whose settings an administrator changes: these people (deactivated ones too) and the active
    people of these groups (through subgroups); with `skip_if_already_edited`, a setting is left
    alone for whoever once changed it themselves."""

    user_ids: tuple[int, ...] = ()
    group_ids: tuple[int, ...] = ()
    skip_if_already_edited: bool = False


def check_settings(changes: Mapping[str, Any]) -> dict[str, Any]:
    """The changes, each value checked by its declaration (validate_settings: Zulip's messages, in
    its order). ValueError for a name that is not a user setting (a caller's mistake)."""
    unknown = sorted(set(changes) - set(USER_SETTINGS))
    if unknown:
        raise ValueError(f"not user settings: {unknown}")
    return validate_settings(changes)


@transaction.atomic
def check_update_settings(
    user: User,
    *,
    changes: Mapping[str, Any],
    full_name: str | None = None,
    email: str | None = None,
    old_password: str | None = None,
    new_password: str | None = None,
    target_users: TargetUsers | None = None,
    acting_user: User | None,
) -> None:
    """PATCH /settings by `user`: their own settings, name (its realm_user event), password (the
    old one needed) and email (a confirmation link to the new address), all of them or none when one
    is refused, the settings and the password in one UPDATE; or, with `target_users`, others'
    settings (administrators only; not the name, email, password, time zone or privacy settings).
    `acting_user` is `user` (or None for an operator: their own settings only)."""
    if target_users is not None:
        if acting_user is None or not acting_user.is_admin:
            raise OrganizationAdministratorRequiredError()
        if any(value is not None for value in (full_name, email, old_password, new_password)):
            raise JsonableError(CANNOT_CHANGE_FOR_OTHERS)
        check_update_settings_of_others(user.realm, target_users, changes, acting_user=acting_user)
        return
    if acting_user is not None and acting_user.id != user.id:
        raise ValueError("a person's own settings are changed by that person (or an operator)")
    changes = check_settings(changes)
    # As in Zulip, a name is checked only when it changes (older accounts keep names no longer allowed).
    name = check_full_name(full_name) if full_name is not None and full_name != user.full_name else None
    password_hash = check_new_password(user, old_password, new_password) if new_password is not None else None
    new_email = check_email_change(user, email) if email is not None else None  # counts the rate limit: last
    do_change_user_settings({user: changes}, new_password_hash=password_hash, acting_user=acting_user)
    if name is not None:
        do_change_full_name(user, name, acting_user=acting_user)
    if new_email is not None:
        do_start_email_change(user, new_email, acting_user=acting_user)


def check_update_settings_of_others(
    realm: Realm, targets: TargetUsers, changes: Mapping[str, Any], *, acting_user: User
) -> list[User]:
    """PATCH /settings with `target_users`: the checks (in Zulip's order), then the changes.
    Returns the users whose settings changed."""
    if not acting_user.is_admin:
        raise OrganizationAdministratorRequiredError()
    if any(not USER_SETTINGS[name].for_others for name in changes if name in USER_SETTINGS):
        raise JsonableError(CANNOT_CHANGE_FOR_OTHERS)
    changes = check_settings(changes)
    users = access_humans_by_ids(realm, list(targets.user_ids))
    if targets.group_ids:
        members = set().union(*settings_target_members.call(realm, list(targets.group_ids)))
        users += active_humans_among(realm, members - {user.id for user in users})
    return check_update_settings_of_users(
        users, changes, skip_if_already_edited=targets.skip_if_already_edited, acting_user=acting_user
    )


def check_update_settings_of_users(
    users: Sequence[User], changes: Mapping[str, Any], *, skip_if_already_edited: bool = False, acting_user: User | None
) -> list[User]:
    """Give these people (of one organization) these settings; with `skip_if_already_edited`, not
    to those who once changed a setting themselves (that setting only). No permission check: for
    administrators' checked requests and operators' commands. Returns the users whose settings
    changed."""
    changes = check_settings(changes)
    if any(user.is_bot for user in users):
        raise ValueError("bots have no settings to change")
    per_user = {user: dict(changes) for user in users}
    if skip_if_already_edited and users:
        user_ids = [user.id for user in users]
        for name in changes:
            edited = users_who_changed_setting(user_ids, name)
            for user in users:
                if user.id in edited:
                    del per_user[user][name]
    return do_change_user_settings(per_user, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_change_user_settings(
    per_user: Mapping[User, Mapping[str, Any]], *, new_password_hash: str | None = None, acting_user: User | None
) -> list[User]:
    """Write checked settings (each user's `per_user` changes; values they already have are left
    alone), one UPDATE per distinct set of changes, and `new_password_hash` (one user only) in the
    same UPDATE. Updates the given User objects; returns those that changed.

    Audit: USER_SETTING_CHANGED per changed value, USER_PASSWORD_CHANGED. Emits: user_settings/update
    per changed value to the user (`language_name` with default_language); realm_user/update
    {email, timezone} to everyone for a time zone; what send_email_visibility_update sends (and
    cached credentials are dropped: the API email may change). Then the user_settings_changed
    hook, per user."""
    users = list(per_user)
    if new_password_hash is not None and len(users) != 1:
        raise ValueError("a password is changed for one user at a time")
    names = sorted({name for changes in per_user.values() for name in changes})
    current = {}
    if names:
        locked = User.objects.select_for_update().filter(id__in=[user.id for user in users])
        current = {row["id"]: row for row in locked.values("id", *names)}
    diffs: dict[User, dict[str, Any]] = {}
    for user in users:
        row = current.get(user.id)
        diff = {name: value for name, value in per_user[user].items() if row is not None and row[name] != value}
        if diff:
            diffs[user] = diff
    _write(diffs, users, new_password_hash)

    entries, receivers = [], defaultdict(list)
    for user, diff in diffs.items():
        for name, value in diff.items():
            old = current[user.id][name]
            entries.append(
                audit_entry(
                    user.realm_id,
                    AuditLogEventType.USER_SETTING_CHANGED,
                    modified_user=user,
                    extra_data=changed(name, old, value),
                    acting_user=acting_user,
                )
            )
            receivers[(user.realm_id, name, value)].append(user.id)
    if new_password_hash is not None:
        user = users[0]
        event_type = AuditLogEventType.USER_PASSWORD_CHANGED
        entries.append(audit_entry(user.realm_id, event_type, modified_user=user, acting_user=acting_user))
    audit_all(entries)
    for (realm_id, name, value), user_ids in receivers.items():
        send_event_on_commit(realm_id, settings_event(name, value), user_ids)
    for user, diff in diffs.items():
        if "timezone" in diff:
            send_person_update(user, {"email": api_email(user), "timezone": user.timezone})
        if "email_address_visibility" in diff:
            # The API email may have changed: cached credentials naming the old one were dropped
            # with the rest (_write).
            send_email_visibility_update(user, current[user.id]["email_address_visibility"])
        user_settings_changed.call(user, diff)
    return list(diffs)


def _write(diffs: dict[User, dict[str, Any]], users: list[User], new_password_hash: str | None) -> None:
    """The UPDATEs: users with the same changes share one; the password rides with its user's."""
    same: dict[tuple, list[User]] = defaultdict(list)
    for user, diff in diffs.items():
        same[tuple(sorted(diff.items()))].append(user)
    if new_password_hash is not None and not diffs:
        same[()] = users
    for items, group in same.items():
        columns = dict(items)
        if new_password_hash is not None:
            columns["password"] = new_password_hash
        User.objects.filter(id__in=[user.id for user in group]).update(**columns)
        # Requests authenticated with the old values (apps.users.accounts) see the new ones.
        forget_credentials_on_commit(user_ids=[user.id for user in group])
        for user in group:
            for name, value in columns.items():
                setattr(user, name, value)


def settings_event(name: str, value: Any) -> dict[str, Any]:
    event = {"type": "user_settings", "op": "update", "property": name, "value": value}
    if name == "default_language":
        event["language_name"] = language_name(value)
    return event
