from django.db import models
from django.db.models import Q
from django.db.models.functions import Upper
from django.utils import timezone

from apps.realms.limits import MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH, MAX_CHANNEL_FOLDER_NAME_LENGTH
from apps.realms.models import Realm
from apps.users.models import User


class ChannelFolder(models.Model):
    """A folder that groups channels in the clients' sidebars (Zulip's ChannelFolder). Folders are
    archived, never deleted; an archived folder keeps its channels."""

    MAX_NAME_LENGTH = MAX_CHANNEL_FOLDER_NAME_LENGTH
    MAX_DESCRIPTION_LENGTH = MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+", db_index=False)
    name = models.CharField(max_length=MAX_NAME_LENGTH)
    description = models.CharField(max_length=MAX_DESCRIPTION_LENGTH, blank=True, default="")
    rendered_description = models.TextField(blank=True, default="")
    # Lower is shown first; ties go by id.
    order = models.IntegerField(default=0)
    date_created = models.DateTimeField(default=timezone.now)
    creator = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    is_archived = models.BooleanField(default=False)

    class Meta:
        constraints = [
            # Names are unique in an organization among folders in use, whatever their case.
            models.UniqueConstraint(
                Upper("name"), "realm", condition=Q(is_archived=False), name="folders_unique_name_in_use"
            ),
        ]
        indexes = [models.Index(fields=["realm", "order", "id"], name="folders_by_realm_in_order")]

    def __str__(self) -> str:
        return self.name + (" (archived)" if self.is_archived else "")
