"""A bounded memo of parsed contracts, keyed by their JSON text.

An orchestrator replays its whole history every episode, reading each earlier result again
(D4). Parsing is a pure function of the text and a frozen contract cannot change, so the
same object serves every replay: deterministic, and a broken text is never stored.
"""

from __future__ import annotations

import datetime as dt
import enum
import pickle
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable
from decimal import Decimal
from typing import Any, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

_IMMUTABLE = (str, int, float, bool, type(None), bytes, Decimal, enum.Enum, uuid.UUID,
              dt.date, dt.time, dt.timedelta)


def immutable(value: Any) -> bool:
    """Return whether ``value`` may be shared: nothing in it can change, however deep.

    A frozen model qualifies only if every field does: a frozen model holding a dict (an
    agent reply's ``result``) would hand one replay's change to the next (D4).
    """
    if isinstance(value, BaseModel):
        return bool(type(value).model_config.get("frozen")) and all(
            immutable(v) for v in value.__dict__.values())
    if isinstance(value, tuple | frozenset):
        return all(immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)


def value_key(value: Any) -> bytes:
    """Return a key of a decoded JSON value: equal keys mean equal values (a lossless encoding).

    Pickle is several times cheaper than re-encoding JSON; a value pickled differently (shared
    objects) only misses.
    """
    return pickle.dumps(value, protocol=5)


class Same:
    """A memo key part equal only to a key part of the very same object (kept alive by it).

    For an object too costly to compare or encode by value (an order of many lines, whose
    ``Decimal`` amounts compare equal across spellings that dump differently): the same
    object serves every replay while :data:`~orders.models.activities.RESULTS` keeps it, and
    another equal one only misses. Only for an object that cannot change (:func:`immutable`;
    a frozen contract of immutable fields by its type), else one replay's change would
    reach the next (D4).
    """

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.obj is self.obj


class ParseMemo:
    """Least-recently-used memo of immutable parse results, bounded in count and in size.

    ``weight`` of an entry is the length of its source text or key bytes (a proxy of its
    memory); at most ``size`` entries of at most ``max_bytes`` together are kept, and an
    entry over ``max_item_bytes`` (a 1,000-line order) is parsed every time, never kept.
    """

    def __init__(self, size: int = 4096, max_bytes: int = 2 << 20,
                 max_item_bytes: int = 32 << 10) -> None:
        self.size, self.max_bytes, self.max_item_bytes = size, max_bytes, max_item_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, parse: Callable[[], T],
            weight: int | Callable[[T], int] = 0) -> T:
        """Return the memoised result for ``key``, else ``parse()`` (kept if immutable).

        ``weight`` may be a function of the result, for a result whose size only it tells
        (an input's JSON text).
        """
        with self._lock:
            hit = self._items.get(key, _MISSING)
            if hit is not _MISSING:
                self._items.move_to_end(key)
                return hit[0]  # type: ignore[no-any-return,index]
        value = parse()
        if callable(weight):
            weight = weight(value)
        if weight <= self.max_item_bytes and immutable(value):
            with self._lock:
                if key not in self._items:
                    self._items[key] = (value, weight)
                    self._bytes += weight
                while len(self._items) > self.size or self._bytes > self.max_bytes:
                    self._bytes -= self._items.popitem(last=False)[1][1]
        return value

    def clear(self) -> None:
        """Forget every result."""
        with self._lock:
            self._items.clear()
            self._bytes = 0


_MISSING = object()
