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


class Playground(models.Model):
    """A code playground (Zulip's RealmPlayground): where code blocks of one language can be opened,
    a URL template whose only variable is `code`. Clients offer it on code blocks of its language."""

    MAX_NAME_LENGTH = 100
    MAX_PYGMENTS_LANGUAGE_LENGTH = 40

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    name = models.TextField()
    # A Pygments lexer's name (or any language a code block may name: Zulip does not restrict it).
    pygments_language = models.CharField(max_length=MAX_PYGMENTS_LANGUAGE_LENGTH)
    url_template = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["realm", "pygments_language", "name"], name="linkifiers_unique_playground")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.pygments_language})"
