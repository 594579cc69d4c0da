"""Creating an organization with its first owner, and the server's administrators (operators' work)."""

from django.db import transaction

from apps.realms.actions import do_create_realm
from apps.realms.models import EmailVisibility, Realm
from apps.realms.selectors import get_realm
from apps.users.actions.create_user import do_create_user
from apps.users.actions.user_settings import do_set_user_staff
from apps.users.models import RealmUserDefault, Role, User


@transaction.atomic
def do_create_realm_with_owner(
    string_id: str,
    name: str,
    *,
    owner_email: str,
    owner_full_name: str,
    owner_password: str | None = None,
    default_email_address_visibility: int = EmailVisibility.ADMINS,
    acting_user: User | None,
) -> tuple[Realm, User]:
    """Create an organization (apps.realms' do_create_realm: with its defaults for new users and
    system groups), who sees the real addresses of its people (`default_email_address_visibility`:
    a default for new users), and its first owner; on any error nothing is created.
    Audit: REALM_CREATED, USER_CREATED."""
    realm = do_create_realm(string_id, name, acting_user=acting_user)
    RealmUserDefault.objects.filter(realm=realm).update(email_address_visibility=default_email_address_visibility)
    owner = do_create_user(
        realm, owner_email, owner_full_name, role=Role.OWNER, password=owner_password, acting_user=acting_user
    )
    return realm, owner


@transaction.atomic
def do_create_server_administrator(email: str, full_name: str, password: str, *, acting_user: User | None) -> User:
    """An owner of the default organization who may use the Django admin (`createsuperuser`); the
    default organization, named "Parley", is created with them when there is none yet.
    Audit: (REALM_CREATED,) USER_CREATED, USER_SPECIAL_PERMISSION_CHANGED {is_staff}."""
    realm = get_realm(Realm.DEFAULT_STRING_ID)
    if realm is None:
        realm, user = do_create_realm_with_owner(
            Realm.DEFAULT_STRING_ID,
            "Parley",
            owner_email=email,
            owner_full_name=full_name,
            owner_password=password,
            acting_user=acting_user,
        )
    else:
        user = do_create_user(realm, email, full_name, role=Role.OWNER, password=password, acting_user=acting_user)
    do_set_user_staff(user, True, acting_user=acting_user)
    return user
