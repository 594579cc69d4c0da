"""REST framework permission classes for the role gates, with Zulip's errors.

A view lists what it needs (`permission_classes = [IsAuthenticatedUser, IsNotGuest]`); they run in
order, after authentication and the rate limit. A gate that refuses raises the error Zulip gives
(REST framework's own answer would be a bare 403).
"""

from rest_framework.permissions import BasePermission

from apps.core.errors import JsonableError, OrganizationAdministratorRequiredError, OrganizationOwnerRequiredError


class IsAuthenticatedUser(BasePermission):
    """Someone authenticated (else 401 UNAUTHORIZED, "Not logged in: ...")."""

    def has_permission(self, request, view) -> bool:
        return request.user is not None


class _RoleGate(BasePermission):
    """Refuses with `error()` an authenticated user for whom `allows(user)` is false."""

    def allows(self, user) -> bool:
        raise NotImplementedError

    def error(self) -> JsonableError:
        raise NotImplementedError

    def has_permission(self, request, view) -> bool:
        if request.user is None:
            return False
        if not self.allows(request.user):
            raise self.error()
        return True


class IsOrganizationAdministrator(_RoleGate):
    def allows(self, user) -> bool:
        return user.is_admin

    def error(self) -> JsonableError:
        return OrganizationAdministratorRequiredError()


class IsOrganizationOwner(_RoleGate):
    def allows(self, user) -> bool:
        return user.is_owner

    def error(self) -> JsonableError:
        return OrganizationOwnerRequiredError()


class IsNotGuest(_RoleGate):
    def allows(self, user) -> bool:
        return not user.is_guest

    def error(self) -> JsonableError:
        return JsonableError("Not allowed for guest users")


class IsHuman(_RoleGate):
    def allows(self, user) -> bool:
        return not user.is_bot

    def error(self) -> JsonableError:
        return JsonableError("This endpoint does not accept bot requests.")
