"""What the invites app does when the apps below it change (registered in InvitesConfig.ready)."""

from collections.abc import Sequence

from apps.invites.actions import do_revoke_invites_created_by
from apps.users.hooks import users_deactivated
from apps.users.models import User


@users_deactivated.register
def revoke_their_invitations(users: Sequence[User]) -> None:
    """A deactivated user's invitation links stop working (Zulip revokes them too)."""
    do_revoke_invites_created_by(users, acting_user=None)
