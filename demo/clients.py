"""The demo's clients: each submits on its own queue and watches its own replies (X10).

Their shares of the TPC-H orders overlap by :data:`OVERLAP`: the same OrderIDs, as
separate orders.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path

from client.receivers import LocalReplyReceiver
from client.submit import reply_queue_for, submit_orders
from client.watch import WatchProgress, WatchResult, watch
from orders.lifecycle.ids import order_key
from orders.messaging import create_sender
from orders.models import ClientOrder
from orders.models.messages import StatusKind

CLIENTS = ("shop-a", "shop-b")

OVERLAP = 0.1


@dataclass(frozen=True)
class ClientBatch:
    """One client's orders, with its own OrderIDs."""

    client_id: str
    orders: tuple[ClientOrder, ...]

    @property
    def keys(self) -> list[str]:
        """The service's keys of these orders."""
        return [order_key(self.client_id, o.order_id) for o in self.orders]

    def key_of(self, order_id: str) -> str:
        """Return the key of this client's OrderID ``order_id``."""
        return order_key(self.client_id, order_id)


def split(orders: Sequence[ClientOrder], clients: Sequence[str] = CLIENTS) -> list[ClientBatch]:
    """Share ``orders`` between ``clients``, consecutive shares overlapping by :data:`OVERLAP`.

    Sizes differ by at most one; none overlap with fewer than 10 orders.

    Raises
    ------
    ValueError
        If ``clients`` is empty.
    """
    if not clients:
        raise ValueError("clients: at least one client is needed")
    n, k = len(orders), len(clients)
    overlap = int(n * OVERLAP) if k > 1 else 0
    batches: list[ClientBatch] = []
    end = 0
    for i, client_id in enumerate(clients):
        size = n // k + (1 if i < n % k else 0)
        begin = max(0, end - overlap)
        batches.append(ClientBatch(client_id, tuple(orders[begin:begin + size])))
        end = begin + size
    return batches


def submit_all(data_dir: Path, batches: Sequence[ClientBatch], *,
               rate: float | None = None) -> None:
    """Submit every client's orders at once, each from its own thread and sender.

    ``rate``: orders per second of all clients together; None sends as fast as possible.

    Raises
    ------
    RuntimeError
        Naming the client whose submission failed.
    """
    errors: dict[str, BaseException] = {}
    total = sum(len(b.orders) for b in batches)
    start = time.monotonic()

    def submit(batch: ClientBatch) -> None:
        try:
            sender = create_sender("local", data_dir=data_dir)
            try:
                send = partial(submit_orders, sender, client_id=batch.client_id,
                               reply_to=reply_queue_for(batch.client_id))
                if rate is None:
                    send(batch.orders)
                    return
                for order, due in zip(batch.orders, offer_times(len(batch.orders), total,
                                                                rate), strict=True):
                    time.sleep(max(0.0, start + due - time.monotonic()))
                    send([order])
            finally:
                sender.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's thread
            errors[batch.client_id] = exc

    _run_each(batches, submit)
    for client_id, exc in errors.items():
        raise RuntimeError(f"client {client_id}: submitting failed: {exc}") from exc


def offer_times(count: int, total: int, rate: float) -> list[float]:
    """Seconds after the start at which one client sends each of its ``count`` orders.

    The client takes its share, ``rate * count / total``; its first order goes at once.

    Raises
    ------
    ValueError
        If ``rate`` is not positive or ``count`` exceeds ``total``.
    """
    if not rate > 0:
        raise ValueError(f"rate: must be positive, got {rate!r}")
    if not 0 <= count <= total:
        raise ValueError(f"count: must be 0 to total ({total}), got {count!r}")
    return [i * total / (rate * count) for i in range(count)]


def watch_all(data_dir: Path, batches: Sequence[ClientBatch], timeout: timedelta,
              on_progress: Callable[[int], None]) -> dict[str, WatchResult]:
    """Watch every client's own reply queue at once, until its orders are terminal.

    ``on_progress`` gets the terminal count over all clients in the *calling* thread: the
    demo restarts processes from it, and a child started with ``PR_SET_PDEATHSIG``
    (:mod:`demo.processes`) dies with the thread that started it.

    Raises
    ------
    RuntimeError
        Naming the client whose watch failed.
    """
    results: dict[str, WatchResult] = {}
    errors: dict[str, BaseException] = {}
    terminal = {b.client_id: 0 for b in batches}
    changed = threading.Condition()

    def follow(batch: ClientBatch) -> None:
        def progress(p: WatchProgress) -> None:
            with changed:
                terminal[batch.client_id] = p.terminal
                changed.notify()

        try:
            receiver = LocalReplyReceiver.open(data_dir, reply_queue_for(batch.client_id))
            try:
                results[batch.client_id] = watch(receiver, len(batch.orders), timeout,
                                                 on_progress=progress)
            finally:
                receiver.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the caller's thread
            errors[batch.client_id] = exc
        with changed:
            changed.notify()

    threads = _start_each(batches, follow)
    shown = -1
    while any(t.is_alive() for t in threads):
        with changed:
            changed.wait(timeout=0.5)
            total = sum(terminal.values())
        if total != shown:
            shown = total
            on_progress(total)
    for thread in threads:
        thread.join()
    on_progress(sum(terminal.values()))
    for client_id, exc in errors.items():
        raise RuntimeError(f"client {client_id}: watching failed: {exc}") from exc
    return results


def rejected_keys(batch: ClientBatch, result: WatchResult | None) -> set[str]:
    """Keys of the client's orders it heard "Rejected" for (X3)."""
    if result is None:
        return set()
    return {batch.key_of(order_id) for order_id, status in result.statuses.items()
            if status.status == StatusKind.REJECTED}


def _start_each(batches: Sequence[ClientBatch],
                work: Callable[[ClientBatch], None]) -> list[threading.Thread]:
    # Daemons: a Ctrl-C ends the demo at once; a watcher's locked message is delivered again
    # later (peek-lock) and an interrupted submission is the user's to send again.
    threads = [threading.Thread(target=work, args=(b,), name=f"client-{b.client_id}",
                                daemon=True) for b in batches]
    for thread in threads:
        thread.start()
    return threads


def _run_each(batches: Sequence[ClientBatch], work: Callable[[ClientBatch], None]) -> None:
    for thread in _start_each(batches, work):
        thread.join()
