"""A per-process cache of what the block reads about a subject's map, per map version.

The build reads the map's version in its lookup statement (tutorbrain.block.build); what
depends only on the map — its lines, its concepts' descriptions — is read again only
when that version changes. Bounded: the least recently used subjects are dropped.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class ByMapVersion:
    def __init__(self, subjects: int) -> None:
        self.subjects = subjects
        self._entries: OrderedDict[int, tuple[object, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, subject_id: int, version: object, read: Callable[[], Any]) -> Any:
        """The value for this subject at this version; `read()` (outside the lock) on a miss."""
        with self._lock:
            hit = self._entries.get(subject_id)
            if hit is not None and hit[0] == version:
                self._entries.move_to_end(subject_id)
                return hit[1]
        value = read()
        with self._lock:
            self._entries[subject_id] = (version, value)
            self._entries.move_to_end(subject_id)
            while len(self._entries) > self.subjects:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
