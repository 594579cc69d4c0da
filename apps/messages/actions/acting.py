"""Who may act for whom in the messages app.

A user's messages, flags and mutes are their own: the actions that change them take the user and
`acting_user`, who is that user (a request), or None (the server itself: a command, demo data).
Nobody acts for someone else; an action given another acting user is a programming error.
"""

from apps.users.models import User


def check_acting_for(user: User, acting_user: User | None) -> None:
    if acting_user is not None and acting_user.id != user.id:
        raise ValueError(f"user {acting_user.id} cannot act for user {user.id} here")
