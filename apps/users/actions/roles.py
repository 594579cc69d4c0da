"""Changing a user's role: who may, and the organization's last owner."""

from django.db import transaction

from apps.core.errors import OrganizationAdministratorRequiredError, OrganizationOwnerRequiredError
from apps.events.publish import forget_credentials_on_commit
from apps.realms.models import AuditLogEventType
from apps.users.actions.activation import check_keeps_an_owner
from apps.users.actions.notify import audit_user_change, send_person_update
from apps.users.errors import LastOwnerRoleError
from apps.users.hooks import user_role_changing
from apps.users.models import Role, User


def check_change_user_role(target: User, role: int, *, acting_user: User) -> None:
    """Change `target`'s role if `acting_user` may: only owners give or take the owner role.

    Raises UNAUTHORIZED_PRINCIPAL, or BAD_REQUEST for the last owner; changes nothing on refusal.
    """
    if role == target.role:
        return
    if Role.OWNER in (role, target.role) and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    if not acting_user.is_admin:  # a bot's owner, who may rename it
        raise OrganizationAdministratorRequiredError()
    do_change_user_role(target, role, acting_user=acting_user)


@transaction.atomic
def do_change_user_role(user: User, role: int, *, acting_user: User | None) -> None:
    """Set the role (no permission checks: operators, and check_change_user_role).

    Raises for the organization's only owner: an organization always keeps one.
    Audit: USER_ROLE_CHANGED {old and new role} (nothing for the same role).
    Emits: realm_user/update {role}, then what the user_role_changing hooks send (the system groups'
    user_group/remove_members and add_members, then stream/create (+ subscription/peer_add) and
    stream/delete for the channels the user now sees or no longer sees).
    """
    if role != Role.OWNER:
        check_keeps_an_owner(user, LastOwnerRoleError)
    old_role = user.role
    after_steps = user_role_changing.call(user, old_role, role) if old_role != role else []
    User.objects.filter(id=user.id).update(role=role)
    user.role = role
    forget_credentials_on_commit(user_ids=[user.id])  # requests authenticated with the old role
    if old_role != role:
        audit_user_change(user, AuditLogEventType.USER_ROLE_CHANGED, "role", old_role, role, acting_user=acting_user)
    send_person_update(user, {"role": role})
    for step in after_steps:
        if step is not None:
            step()
