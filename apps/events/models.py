from django.db import models


class OutboxEvent(models.Model):
    """One row per event, written in the transaction that causes the event.

    POST /register reads the initial state in one snapshot and, in the same snapshot, which recent
    events are already part of it; those are kept out of the new queue, so no event is applied
    twice. Rows older than a few minutes are deleted by the queue sweep.
    """

    created = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"event {self.id} at {self.created:%H:%M:%S}"
