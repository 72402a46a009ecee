"""Decides, per request, which fault (if any) the simulator injects.

Kept apart from the HTTP layer so the decision rules are one small, readable function. The
transient-error draw is reproducible: it is seeded with the run's seed, the service, the
order id and the request's ordinal for that order, so the same run gives the same faults
even when several orders are processed concurrently in a different interleaving.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from clocks import Clock
from simulator.config import SERVICES, FaultUpdate, SimulatorConfig


class FaultKind(StrEnum):
    """Which fault a request meets; ``PASS`` means none."""

    PASS = "pass"
    FAIL_FOREVER = "fail_forever"
    OUTAGE = "outage"
    DECLINE = "decline"
    BLACK_HOLE = "black_hole"
    TRANSIENT = "transient"


@dataclass(frozen=True)
class Verdict:
    """The fault decided for one request.

    Attributes
    ----------
    kind : FaultKind
        The fault, or ``PASS``.
    status : int or None
        HTTP status to answer with (None for ``PASS`` and ``BLACK_HOLE``).
    retry_after_s : int or None
        Seconds for the ``Retry-After`` header, when the answer carries one.
    reason : str or None
        Machine-readable reason for the body's ``error`` field.
    performs_effect : bool
        For ``BLACK_HOLE``: whether the side effect is performed before holding.
    """

    kind: FaultKind
    status: int | None = None
    retry_after_s: int | None = None
    reason: str | None = None
    performs_effect: bool = False


PASS = Verdict(FaultKind.PASS)


class FaultInjector:
    """Holds the fault knobs in force and decides the fault of each request; thread-safe.

    Parameters
    ----------
    config : SimulatorConfig
        Initial knobs.
    clock : Clock
        Time source for outage windows and for resolving relative outages.
    """

    def __init__(self, config: SimulatorConfig, clock: Clock) -> None:
        self._config = config
        self._clock = clock
        self._lock = threading.Lock()
        self._black_holed: dict[tuple[str, str], int] = {}

    @property
    def config(self) -> SimulatorConfig:
        """The knobs in force."""
        with self._lock:
            return self._config

    def update(self, update: FaultUpdate) -> SimulatorConfig:
        """Apply a change to the knobs; resets the black-hole counts of changed services.

        Parameters
        ----------
        update : FaultUpdate
            The change (see :meth:`SimulatorConfig.updated`).

        Returns
        -------
        SimulatorConfig
            The knobs now in force.
        """
        with self._lock:
            self._config = self._config.updated(update, self._clock.now())
            for service in SERVICES:
                if update.for_service(service) is not None or update.all is not None:
                    self._black_holed = {
                        k: v for k, v in self._black_holed.items() if k[0] != service
                    }
            return self._config

    def reset(self) -> SimulatorConfig:
        """Put every knob back to its default (no faults, seed 0) and forget the counts.

        Returns
        -------
        SimulatorConfig
            The default knobs, now in force.
        """
        with self._lock:
            self._config = SimulatorConfig()
            self._black_holed = {}
            return self._config

    def latency_s(self, service: str) -> float:
        """Seconds to add before answering a request of ``service``."""
        return self.config.for_service(service).latency_s

    def decide(self, service: str, order_id: str, ordinal: int,
               operation: str = "charge") -> Verdict:
        """Decide the fault of one request.

        Rules are checked in this order, the first match wins: fail-forever (503),
        outage window (503 with ``Retry-After`` up to its end), decline (402/422),
        black hole, transient error (503, or 429 with ``Retry-After``).

        The per-order knobs (fail-forever, decline, black hole) model a problem with that
        order's requests and apply to the operations in ``order_fault_operations``: the
        forward ones (``charge``, ``ship``) by default, so the undo of a declined order is
        answered. Outages and transient errors are the service's and apply to every
        operation.

        Parameters
        ----------
        service : str
            ``payment`` or ``shipping``.
        order_id : str
            The order the request is about.
        ordinal : int
            1-based number of this request among all requests for ``(service, order_id)``;
            feeds the reproducible transient draw.
        operation : str
            ``charge``, ``refund``, ``ship`` or ``cancel``.

        Returns
        -------
        Verdict
            The fault to inject, or :data:`PASS`.
        """
        now: datetime = self._clock.now()
        with self._lock:
            seed = self._config.seed
            faults = self._config.for_service(service)
            applies = operation in faults.order_fault_operations
            if applies and order_id in faults.fail_forever_order_ids:
                return Verdict(FaultKind.FAIL_FOREVER, 503, None, "fail_forever")
            end = faults.outage_end_at(now)
            if end is not None:
                wait_s = max(1, int(-(-(end - now).total_seconds() // 1)))
                return Verdict(FaultKind.OUTAGE, 503, wait_s, "outage")
            decline = faults.decline.get(order_id) if applies else None
            if decline is not None:
                return Verdict(FaultKind.DECLINE, decline.status, None, decline.reason)
            if applies and order_id in faults.black_hole_order_ids:
                held = self._black_holed.get((service, order_id), 0)
                limit = faults.black_hole_first_n
                if limit is None or held < limit:
                    self._black_holed[(service, order_id)] = held + 1
                    return Verdict(
                        FaultKind.BLACK_HOLE, performs_effect=faults.black_hole_performs_effect
                    )
        if faults.transient_rate > 0:
            # str seeds are hashed deterministically (unlike hash()), so runs reproduce.
            rng = random.Random(f"{seed}|{service}|{order_id}|{ordinal}")
            if rng.random() < faults.transient_rate:
                status = rng.choice(faults.transient_statuses)
                retry_after = faults.retry_after_s if status == 429 else None
                return Verdict(FaultKind.TRANSIENT, status, retry_after, "transient")
        return PASS
