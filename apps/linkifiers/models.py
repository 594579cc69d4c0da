from django.db import models

from apps.realms.models import Realm


class Linkifier(models.Model):
    """An organization's pattern that turns matching text of messages and topics into links
    (Zulip's RealmFilter). Checked by apps.linkifiers.patterns before it is saved."""

    # Found by the indexes below (their first column), which need no other.
    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+", db_index=False)
    pattern = models.TextField()
    url_template = models.TextField()
    # Empty: none (the API's null).
    example_input = models.TextField(blank=True, default="")
    reverse_template = models.TextField(blank=True, default="")
    alternative_url_templates = models.JSONField(default=list, blank=True)
    # Linkifiers apply in this order (then by id): where two match overlapping text, the first wins.
    order = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["realm", "pattern"], name="linkifiers_unique_pattern")]
        indexes = [models.Index(fields=["realm", "order", "id"], name="linkifiers_in_order")]

    def __str__(self) -> str:
        return f"{self.pattern} -> {self.url_template}"
