"""The parsed options of the queues a process polls (the Redis backend reads them with each poll)."""

import json
import threading
from collections import OrderedDict

from apps.events.registry import QueueOptions


class _SharedOptions:
    __slots__ = ("options", "queues", "raw")

    def __init__(self, raw: bytes, options: QueueOptions) -> None:
        self.raw, self.options, self.queues = raw, options, 0


class QueueOptionsCache:
    """The parsed options of the queues this process polls, so that a poll need not parse them.

    Kept per queue (a queue's options never change) and dropped when the queue is deleted; queues
    registered alike share one parsed copy. Bounded by size: the JSON of each distinct options is
    counted once, each queue's entry PER_QUEUE_BYTES; past `max_bytes` the queues polled least
    recently leave first (their next poll parses their options again).
    """

    MAX_BYTES = 16 * 2**20
    PER_QUEUE_BYTES = 200

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._by_queue: OrderedDict[str, _SharedOptions] = OrderedDict()
        self._by_raw: dict[bytes, _SharedOptions] = {}
        self._lock = threading.Lock()

    def get(self, queue_id: str, raw: bytes) -> QueueOptions:
        """The options of `queue_id`, whose stored form is `raw`."""
        with self._lock:
            shared = self._by_queue.get(queue_id)
            if shared is not None:
                self._by_queue.move_to_end(queue_id)
                return shared.options
            shared = self._by_raw.get(raw)
            if shared is None:
                shared = self._by_raw[raw] = _SharedOptions(raw, QueueOptions.from_json(json.loads(raw)))
                self.size += len(raw)
            shared.queues += 1
            self._by_queue[queue_id] = shared
            self.size += self.PER_QUEUE_BYTES
            while self.size > self.max_bytes and self._by_queue:
                self._release(self._by_queue.popitem(last=False)[1])
            return shared.options

    def forget(self, queue_ids: list[str]) -> None:
        """These queues are deleted."""
        with self._lock:
            for queue_id in queue_ids:
                shared = self._by_queue.pop(queue_id, None)
                if shared is not None:
                    self._release(shared)

    def clear(self) -> None:
        with self._lock:
            self._by_queue.clear()
            self._by_raw.clear()
            self.size = 0

    def __len__(self) -> int:
        return len(self._by_queue)

    def _release(self, shared: _SharedOptions) -> None:
        self.size -= self.PER_QUEUE_BYTES
        shared.queues -= 1
        if not shared.queues:
            del self._by_raw[shared.raw]
            self.size -= len(shared.raw)
