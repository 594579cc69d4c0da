"""Push registrations: a phone's tokens (the legacy endpoints) and its devices (Zulip's current
registration, end-to-end encrypted notifications). Both are the user's own: changed by that user's
requests or by the server (an operator in the admin, a token the push service refused), never by
someone else.

Emits: `device` events (add, update, remove) to the owner's queues for devices; tokens have none.
"""

from django.db import transaction
from django.utils import timezone

from apps.core.cache import forget
from apps.core.conflicts import retried_on_conflict
from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.push import tasks  # the module: it runs these actions, and they queue its tasks
from apps.push.backends import SendResult, push_backend
from apps.push.e2ee import token_id_of
from apps.push.models import Device, PushDeviceToken
from apps.push.selectors import access_device_by_id, has_devices_cache_key
from apps.push.serializers import check_push_key, check_token_kind, decode_token_id, device_to_dict
from apps.users.models import User

# --- tokens (POST/DELETE /users/me/apns_device_token, /users/me/android_gcm_reg_id) ----------------


def do_add_push_device_token(user: User, *, kind: int, token: str, ios_app_id: str | None = None) -> PushDeviceToken:
    """Registers the (checked) token for the user, or refreshes its app id and time when they have
    it already: one row per (user, kind, token)."""
    # Its row locked while refreshed: a removal at the same moment comes before (it is added
    # again) or after; one between update_or_create's failed insert and its reading again (the race
    # QA pass: two registrations and a removal at once, a 500) is tried again.
    defaults = {"ios_app_id": ios_app_id, "last_updated": timezone.now()}
    row, _ = retried_on_conflict(
        lambda: PushDeviceToken.objects.update_or_create(user=user, kind=kind, token=token, defaults=defaults)
    )
    _registrations_changed(user.realm_id)
    if push_backend().registers_tokens:
        tasks.register_token_with_service.enqueue(user.id, kind, token, ios_app_id)
    return row


def do_remove_push_device_token(user: User, *, kind: int, token: str) -> None:
    """Removes the user's token: "Token does not exist" when they have none such (whoever else has)."""
    deleted, _ = PushDeviceToken.objects.filter(user=user, kind=kind, token=token).delete()
    if not deleted:
        raise JsonableError("Token does not exist")
    _registrations_changed(user.realm_id)
    if push_backend().registers_tokens:
        tasks.unregister_token_with_service.enqueue(user.id, kind, token)


def do_remove_push_device_tokens(tokens: list[PushDeviceToken]) -> int:
    """Removes these tokens (an operator in the admin, or tokens the push service refused: it knows
    them no more, so it is not told)."""
    deleted, _ = PushDeviceToken.objects.filter(id__in=[token.id for token in tokens]).delete()
    for realm_id in set(User.objects.filter(id__in={t.user_id for t in tokens}).values_list("realm_id", flat=True)):
        _registrations_changed(realm_id)
    return deleted


def _registrations_changed(realm_id: int) -> None:
    """Whether the organization has phones registered may have changed: its cached answer goes."""
    forget(has_devices_cache_key(realm_id))
    transaction.on_commit(lambda: forget(has_devices_cache_key(realm_id)))


# --- devices (POST /register_client_device, /mobile_push/register, /remove_client_device) ---------


@transaction.atomic(savepoint=False)
def do_register_client_device(user: User) -> Device:
    """A new device of the user. Emits: device add to the user."""
    device = Device.objects.create(user=user, date_created=timezone.now())
    send_event_on_commit(user.realm_id, {"type": "device", "op": "add", "device_id": device.id}, [user.id])
    return device


@transaction.atomic
def do_remove_client_device(device: Device) -> None:
    """Removes the device (logged out), once ("Invalid `device_id`" when removed meanwhile).
    Emits: device remove to its user."""
    user_id, realm_id, device_id = device.user_id, device.user.realm_id, device.id
    access_device_by_id(device.user, device_id, lock=True).delete()
    send_event_on_commit(realm_id, {"type": "device", "op": "remove", "device_id": device_id}, [user_id])


@transaction.atomic(savepoint=False)
def do_rotate_push_key(device: Device, *, push_key: bytes, push_key_id: int) -> None:
    """A new key for the device's notifications. Emits: device update (push_key_id) to its user."""
    device.push_key, device.push_key_id = push_key, push_key_id
    device.save(update_fields=["push_key", "push_key_id"])
    _send_device_update(device, ["push_key_id"])


@transaction.atomic(savepoint=False)
def do_register_push_token(
    device: Device,
    *,
    token_kind: str,
    token_id: int,
    bouncer_public_key: str,
    encrypted_push_registration: str,
    push_key: bytes | None = None,
    push_key_id: int | None = None,
) -> None:
    """Stores the device's push token registration as its app sent it (and its key, when sent
    along). With a backend that registers devices with the push bouncer (the bouncer backend), the
    token is pending until the bouncer has it (a task: do_complete_push_registration); with any other
    it counts at once (the log backend, where tests set it up as a push service: a server whose
    notifications reach no phone refuses registrations, apps/push/views.py). Emits: device update to
    its user (its key id when sent, its token ids and time, no error)."""
    now = timezone.now()
    changed = ["pending_push_token_id", "push_token_last_updated_timestamp", "push_registration_error_code"]
    if push_key is not None:
        device.push_key, device.push_key_id = push_key, push_key_id
        changed.insert(0, "push_key_id")
    device.push_token_kind = token_kind
    device.push_token_last_updated_timestamp = now
    device.push_registration_error_code = None
    device.bouncer_public_key, device.encrypted_push_registration = bouncer_public_key, encrypted_push_registration
    if push_backend().registers_devices:
        device.pending_push_token_id = token_id
        tasks.register_device_with_service.enqueue(device.id, token_id, bouncer_public_key, encrypted_push_registration)
    else:
        device.push_token_id, device.pending_push_token_id = token_id, None
        changed.insert(0, "push_token_id")
        _drop_legacy_token(device, token_id)
    device.save()
    _registrations_changed(device.user.realm_id)
    _send_device_update(device, changed)


def _drop_legacy_token(device: Device, token_id: int) -> None:
    """The phone registered for encrypted notifications: the same token registered the legacy way
    goes, as Zulip's since feature level 483 (the push QA pass: both forms were sent, and iOS showed
    the legacy alert beside the decrypted one). Its token is known by its id only."""
    kind = PushDeviceToken.Kind.APNS if device.push_token_kind == Device.TokenKind.APNS else PushDeviceToken.Kind.FCM
    legacy = PushDeviceToken.objects.filter(user_id=device.user_id, kind=kind)
    # APNs tokens are kept in lower case; the app may have hashed them as it got them.
    same = [row.id for row in legacy if token_id in (token_id_of(row.token), token_id_of(row.token.upper()))]
    if same:
        do_remove_push_device_tokens(list(legacy.filter(id__in=same)))


def _still_there(device: Device) -> bool:
    """Whether the device is still registered (not removed while its task talked to the push
    service); its row then locked until the transaction ends."""
    return Device.objects.select_for_update().filter(id=device.id).exists()


@transaction.atomic(savepoint=False)
def do_complete_push_registration(device: Device, token_id: int) -> None:
    """The push bouncer has the device's pending token: it is the device's (unless removed
    meanwhile). Emits: device update."""
    if not _still_there(device):
        return
    device.push_token_id, device.pending_push_token_id = token_id, None
    device.save(update_fields=["push_token_id", "pending_push_token_id"])
    _drop_legacy_token(device, token_id)
    _registrations_changed(device.user.realm_id)
    _send_device_update(device, ["push_token_id", "pending_push_token_id"])


@transaction.atomic(savepoint=False)
def do_fail_push_registration(device: Device, error_code: str) -> None:
    """The push bouncer refused the device's pending registration (the app may register again).
    Emits: device update (push_registration_error_code)."""
    if not _still_there(device):
        return
    device.push_registration_error_code = error_code
    device.save(update_fields=["push_registration_error_code"])
    _send_device_update(device, ["push_registration_error_code"])


@transaction.atomic(savepoint=False)
def do_forget_push_registrations(devices: list[Device]) -> None:
    """The push service refused these devices' tokens (the app was uninstalled, or the token is
    stale): they are registered no more, until their app registers a token again. Emits: device
    update (push_token_id) to each one's user."""
    for device in devices:
        device.push_token_id = None
        if not Device.objects.filter(id=device.id).update(push_token_id=None):
            continue  # removed meanwhile
        _registrations_changed(device.user.realm_id)
        _send_device_update(device, ["push_token_id"])


def do_remove_refused(result: SendResult) -> None:
    """What the push service refused in a send: the tokens go, the devices' registrations too."""
    if result.refused:
        do_remove_push_device_tokens(result.refused)
    if result.refused_devices:
        do_forget_push_registrations(result.refused_devices)


def _send_device_update(device: Device, fields: list[str]) -> None:
    shape = device_to_dict(device)
    event = {"type": "device", "op": "update", "device_id": device.id, **{name: shape[name] for name in fields}}
    send_event_on_commit(device.user.realm_id, event, [device.user_id])


@transaction.atomic
def check_register_push_device(
    device: Device,
    *,
    token_kind: str | None,
    token_id: str | None,
    bouncer_public_key: str | None,
    encrypted_push_registration: str | None,
    push_key: str | None,
    push_key_id: int | None,
) -> None:
    """POST /mobile_push/register with Zulip's rules: all the key fields (a new key for a device
    registered already), all the token fields (a new token for one), or both (a registration);
    the same registration again changes nothing. The device is read again under a lock: as a
    removal or registration at the same moment left it."""
    device = access_device_by_id(device.user, device.id, lock=True)
    key_sent = push_key is not None and push_key_id is not None
    token_sent = None not in (token_kind, token_id, bouncer_public_key, encrypted_push_registration)
    if not (key_sent or token_sent):
        raise JsonableError("Missing parameters: must provide either all push key fields, all token fields, or both.")
    key = check_push_key(push_key) if key_sent else None
    if not token_sent:
        if device.push_key_id is None:
            raise JsonableError("No push registration exists to rotate key for.")
        do_rotate_push_key(device, push_key=key, push_key_id=push_key_id)
        return
    if device.push_registration_error_code is None and device.pending_push_token_id is not None:
        raise JsonableError("A registration for the device already in progress.")
    kind, token_number = check_token_kind(token_kind), decode_token_id(token_id)
    if not key_sent and device.push_key_id is None:
        raise JsonableError("No push registration exists to rotate token for.")
    unchanged = device.push_registration_error_code is None and device.push_token_id == token_number
    if key_sent:
        same_key = device.push_key is not None and bytes(device.push_key) == key
        unchanged = unchanged and same_key and device.push_key_id == push_key_id and device.push_token_kind == kind
    if unchanged:
        return
    do_register_push_token(
        device,
        token_kind=kind,
        token_id=token_number,
        bouncer_public_key=bouncer_public_key,
        encrypted_push_registration=encrypted_push_registration,
        push_key=key,
        push_key_id=push_key_id if key_sent else None,
    )
