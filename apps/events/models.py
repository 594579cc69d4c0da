from django.db import models


class OutboxEvent(models.Model):
    """One row per event, written in the transaction that causes the event (a transactional outbox).

    `seq` numbers the organization's events in commit order: on PostgreSQL a deferred trigger sets
    it while the transaction commits (see migration 0002), so it is the last lock a transaction
    takes; on SQLite, where writing transactions run one at a time, it is set when the row is
    written. Publishing follows `seq`, so every queue receives events in commit order; an event
    whose publish failed is published from here later; and POST /register skips the events its
    initial state already contains (those with `seq` up to the one its snapshot saw). Rows older
    than a few minutes are deleted by the queue sweep. `user_ids` is the audience: a list of user
    ids, or {"everyone_except": [ids]} for everyone of the organization (backends.Everyone).
    """

    realm = models.ForeignKey("realms.Realm", on_delete=models.CASCADE, related_name="+")
    seq = models.BigIntegerField(null=True)
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    event_type = models.CharField(max_length=64)
    payload = models.TextField()
    user_ids = models.JSONField()

    class Meta:
        indexes = [models.Index(fields=["realm", "seq"], name="events_outbox_realm_seq")]

    def __str__(self) -> str:
        return f"{self.event_type} event {self.realm_id}:{self.seq} at {self.created:%H:%M:%S}"


class RealmEventSequence(models.Model):
    """The `seq` of the organization's newest committed event."""

    realm = models.OneToOneField("realms.Realm", on_delete=models.CASCADE, primary_key=True, related_name="+")
    seq = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"organization {self.realm_id}: event {self.seq}"
