"""What the invites app does when the apps below it change (registered in InvitesConfig.ready).

The hooks do not say who made the change: the audit entries written here have no acting user.
"""

from collections.abc import Callable, Sequence

from apps.invites.actions.email_invitations import do_close_email_invitations
from apps.invites.actions.invites import do_revoke_invites_created_by
from apps.invites.actions.welcome import do_create_welcome_bot, do_send_welcome_message
from apps.invites.selectors import invitable_roles
from apps.realms.hooks import realm_created
from apps.realms.models import Realm
from apps.users.hooks import Joining, person_created, user_role_changing, users_deactivated
from apps.users.models import Role, User


@realm_created.register
def create_welcome_bot(realm: Realm) -> None:
    """A new organization has its Welcome Bot before its first person, whom it greets."""
    do_create_welcome_bot(realm)


@person_created.register
def welcome(user: User, joining: Joining) -> None:
    do_send_welcome_message(user, custom_text=joining.welcome_message_custom_text, acting_user=None)


@person_created.register
def close_invitations_to_them(user: User, joining: Joining) -> None:
    """Their address has an account now: the other invitations sent to it stop working (Zulip
    revokes them), whichever way they joined."""
    do_close_email_invitations(user.realm_id, email=user.delivery_email)


@user_role_changing.register
def revoke_invitations_above_their_role(user: User, old_role: int, new_role: int) -> Callable[[], None]:
    """Someone given a lower role no longer makes people of the roles they may no longer give (the
    security QA pass: a demoted administrator's link still made administrators)."""

    def revoke() -> None:
        beyond = [role for role in Role if role not in invitable_roles(user)]
        do_revoke_invites_created_by([user], invited_as=beyond, acting_user=None)
        do_close_email_invitations(user.realm_id, referrers=[user], invited_as=beyond)

    return revoke


@users_deactivated.register
def revoke_their_invitations(users: Sequence[User]) -> None:
    """A deactivated user's invitations stop working, links and emails (Zulip revokes them too)."""
    do_revoke_invites_created_by(users, acting_user=None)
    if users:
        do_close_email_invitations(users[0].realm_id, referrers=users)
