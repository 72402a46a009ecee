"""End-to-end latency of the demo's orders, from the local Service Bus's own enqueued times.

From the submit message's enqueued time to the terminal status's, one clock. The submit
message's time survives its completion in the queue's duplicate detection history
(:meth:`~sqlitebus.ServiceBusEngine.first_sent`) for the queue's 10-minute window only: a
longer run reads it as it goes (:func:`read_submit_times`, as ``bench.soak`` does).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from client.submit import reply_queue_for, submit_message, submit_queue_for
from client.watch import WatchResult
from demo.clients import ClientBatch


def percentile(values: Sequence[float], q: float) -> float:
    """Return the nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``.

    Raises
    ------
    ValueError
        If ``values`` is empty or ``q`` is out of range.
    """
    if not values:
        raise ValueError("values: need at least one value")
    if not 0 < q <= 100:
        raise ValueError(f"q: must be in (0, 100], got {q!r}")
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


@dataclass(frozen=True)
class Latency:
    """Percentiles of end-to-end latency in milliseconds over ``count`` orders."""

    count: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float

    @classmethod
    def of(cls, latencies_ms: Sequence[float]) -> Latency | None:
        """Summarize latencies (ms); None when there are none."""
        if not latencies_ms:
            return None
        return cls(len(latencies_ms), percentile(latencies_ms, 50),
                   percentile(latencies_ms, 95), percentile(latencies_ms, 99),
                   max(latencies_ms))

    def as_dict(self) -> dict[str, float]:
        """JSON form: ``count``, ``p50_ms``, ``p95_ms``, ``p99_ms``, ``max_ms``."""
        return {"count": self.count, "p50_ms": self.p50_ms, "p95_ms": self.p95_ms,
                "p99_ms": self.p99_ms, "max_ms": self.max_ms}


def latencies_ms(submitted: Mapping[str, datetime], finished: Mapping[str, datetime],
                 ) -> list[float]:
    """Milliseconds from submission to the terminal status, for keys with both times."""
    return [(finished[k] - submitted[k]) / timedelta(milliseconds=1)
            for k in finished if k in submitted]


def submit_ids(batches: Iterable[ClientBatch]) -> dict[str, dict[str, str]]:
    """Return each submit queue's MessageIds of the orders, mapped to their order keys."""
    ids: dict[str, dict[str, str]] = {}
    for batch in batches:
        reply_to = reply_queue_for(batch.client_id)
        ids.setdefault(submit_queue_for(batch.client_id), {}).update(
            (submit_message(batch.client_id, reply_to, order).message_id, key)
            for order, key in zip(batch.orders, batch.keys, strict=True))
    return ids


def read_submit_times(data_dir: Path, ids: Mapping[str, Mapping[str, str]],
                      ) -> dict[str, datetime]:
    """Return the enqueued time of each of ``ids`` (from :func:`submit_ids`) still held, by key."""
    from sqlitebus import open_engine  # the local host's, as the demo's audit

    found: dict[str, datetime] = {}
    with open_engine(data_dir) as engine:
        for queue, keys in ids.items():
            for message_id, sent in engine.first_sent(queue).items():
                if message_id in keys:
                    found[keys[message_id]] = sent
    return found


def submit_times(data_dir: Path, batches: Iterable[ClientBatch]) -> dict[str, datetime]:
    """Return the enqueued time of each order's submit message still in the history, by key."""
    return read_submit_times(data_dir, submit_ids(batches))


def terminal_times(batches: Iterable[ClientBatch], heard: Mapping[str, WatchResult],
                   ) -> dict[str, datetime]:
    """Return the enqueued time of each order's terminal status message, by order key."""
    out: dict[str, datetime] = {}
    for batch in batches:
        result = heard.get(batch.client_id)
        for order_id, status in (result.statuses.items() if result else ()):
            if status.terminal and status.enqueued_time is not None:
                out[batch.key_of(order_id)] = status.enqueued_time
    return out


def measure(data_dir: Path, batches: Sequence[ClientBatch],
            heard: Mapping[str, WatchResult]) -> Latency | None:
    """End-to-end latency percentiles of the run's orders (None if none was measured)."""
    return Latency.of(latencies_ms(submit_times(data_dir, batches),
                                   terminal_times(batches, heard)))
