"""Decides, per request, which fault (if any) the simulator injects; see docs/simulator.md."""

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
    """The fault decided for one request; ``status`` is None for ``PASS`` and ``BLACK_HOLE``."""

    kind: FaultKind
    status: int | None = None
    retry_after_s: int | None = None
    reason: str | None = None
    performs_effect: bool = False


PASS = Verdict(FaultKind.PASS)


class FaultInjector:
    """Holds the fault knobs in force and decides the fault of each request; thread-safe."""

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
        """Apply a change; return the knobs in force. Resets changed services' black-hole counts."""
        with self._lock:
            self._config = self._config.updated(update, self._clock.now())
            for service in SERVICES:
                if update.for_service(service) is not None or update.all is not None:
                    self._black_holed = {
                        k: v for k, v in self._black_holed.items() if k[0] != service
                    }
            return self._config

    def reset(self) -> SimulatorConfig:
        """Put every knob back to its default (no faults, seed 0), forget counts; return them."""
        with self._lock:
            self._config = SimulatorConfig()
            self._black_holed = {}
            return self._config

    def latency_s(self, service: str) -> float:
        """Seconds to add before answering a request of ``service``."""
        return self.config.for_service(service).latency_s

    def decide(self, service: str, order_key: str, ordinal: int,
               operation: str = "charge") -> Verdict:
        """Decide the fault of one request (docs/simulator.md, "Which fault a request meets").

        ``ordinal`` is the 1-based number of the request for ``(service, order_key)``; it feeds the
        reproducible transient draw.
        """
        now: datetime = self._clock.now()
        with self._lock:
            seed = self._config.seed
            faults = self._config.for_service(service)
            applies = operation in faults.order_fault_operations
            if applies and order_key in faults.fail_forever_order_ids:
                return Verdict(FaultKind.FAIL_FOREVER, 503, None, "fail_forever")
            end = faults.outage_end_at(now)
            if end is not None:
                wait_s = max(1, int(-(-(end - now).total_seconds() // 1)))
                return Verdict(FaultKind.OUTAGE, 503, wait_s, "outage")
            decline = faults.decline.get(order_key) if applies else None
            if decline is not None:
                return Verdict(FaultKind.DECLINE, decline.status, None, decline.reason)
            if applies and order_key in faults.black_hole_order_ids:
                held = self._black_holed.get((service, order_key), 0)
                limit = faults.black_hole_first_n
                if limit is None or held < limit:
                    self._black_holed[(service, order_key)] = held + 1
                    return Verdict(
                        FaultKind.BLACK_HOLE, performs_effect=faults.black_hole_performs_effect
                    )
        if faults.transient_rate > 0:
            # str seeds are hashed deterministically (unlike hash()), so runs reproduce.
            rng = random.Random(f"{seed}|{service}|{order_key}|{ordinal}")
            if rng.random() < faults.transient_rate:
                status = rng.choice(faults.transient_statuses)
                retry_after = faults.retry_after_s if status == 429 else None
                return Verdict(FaultKind.TRANSIENT, status, retry_after, "transient")
        return PASS
