from django.db import models

from apps.users.models import User


class NavigationView(models.Model):
    """A view of a user's left sidebar as they arranged it (Zulip's NavigationView): a built-in one
    (Inbox, Recent conversations...) pinned or hidden, or one of their own, a narrow they named.
    `fragment` is the view's URL hash (`inbox`, `narrow/is/starred`, ...)."""

    # Parley's bounds (Zulip has none): every client receives them all in POST /register.
    MAX_FRAGMENT_LENGTH = 1000
    MAX_NAME_LENGTH = 100
    MAX_PER_USER = 1000

    # Found by the constraint's index below (its first column), which needs no other.
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    fragment = models.CharField(max_length=MAX_FRAGMENT_LENGTH)
    is_pinned = models.BooleanField(default=False)
    name = models.CharField(max_length=MAX_NAME_LENGTH, null=True, blank=True)  # noqa: DJ001 (None: built-in)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "fragment"], name="navigation_views_unique_fragment")]

    def __str__(self) -> str:
        return f"{self.name or self.fragment} ({self.user_id})"
