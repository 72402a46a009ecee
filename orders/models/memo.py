"""A bounded memo of parsed contracts, keyed by their JSON text.

An orchestrator replays its whole history every episode, reading each earlier result again
(D4). Parsing is a pure function of the text and a frozen contract cannot change, so the
same object serves every replay: deterministic, and a broken text is never stored.
"""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

_IMMUTABLE = (str, int, float, bool, type(None))


def immutable(value: Any) -> bool:
    """Return whether ``value`` may be shared: a frozen model, a scalar or None."""
    if isinstance(value, BaseModel):
        return bool(type(value).model_config.get("frozen"))
    return isinstance(value, _IMMUTABLE)


def value_key(value: Any) -> bytes:
    """Return a key of a decoded JSON value: equal keys mean equal values (a lossless encoding).

    Pickle is several times cheaper than re-encoding JSON; a value pickled differently (shared
    objects) only misses.
    """
    return pickle.dumps(value, protocol=5)


class ParseMemo:
    """Least-recently-used memo of at most ``size`` immutable parse results."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, parse: Callable[[], T]) -> T:
        """Return the memoised result for ``key``, else ``parse()`` (kept if immutable)."""
        with self._lock:
            hit = self._items.get(key, _MISSING)
            if hit is not _MISSING:
                self._items.move_to_end(key)
                return hit  # type: ignore[no-any-return]
        value = parse()
        if immutable(value):
            with self._lock:
                self._items[key] = value
                if len(self._items) > self.size:
                    self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every result."""
        with self._lock:
            self._items.clear()


_MISSING = object()
