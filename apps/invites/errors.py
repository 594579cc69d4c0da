"""The error classes of invitations (Zulip's messages, BAD_REQUEST)."""

from apps.core.errors import ErrorCode, JsonableError

# (address, why, whether its account is deactivated): Zulip's InvitationError entries.
AddressError = tuple[str, str, bool]


class InvitationNotFoundError(JsonableError):
    """An invitation id that is not one of the organization's (or of none): one answer for both."""

    def __init__(self) -> None:
        super().__init__("No such invitation")


class InvitationAlreadyRevokedError(JsonableError):
    def __init__(self) -> None:
        super().__init__("Invitation has already been revoked")


class InvalidInviteChannelError(JsonableError):
    def __init__(self, stream_id: int) -> None:
        super().__init__(f"Invalid channel ID {stream_id}. No invites were sent.")


class InvalidInvitationLinkError(JsonableError):
    """A link that lets nobody in: unknown, another organization's, expired or revoked (one answer
    for all, so that a visitor learns nothing about links they do not hold)."""

    def __init__(self) -> None:
        super().__init__("This invitation link cannot be used.")


class InvitationError(JsonableError):
    """Zulip's INVITATION_FAILED: which addresses could not be invited and why, whether the others
    were, and whether the organization's daily limit stopped it."""

    code = ErrorCode.INVITATION_FAILED

    def __init__(
        self, msg: str, errors: list[AddressError], *, sent_invitations: bool, daily_limit_reached: bool = False
    ) -> None:
        super().__init__(
            msg,
            errors=[list(error) for error in errors],
            sent_invitations=sent_invitations,
            license_limit_reached=False,
            daily_limit_reached=daily_limit_reached,
        )
