"""A scripted fake remote service for httpx.MockTransport, on a ManualClock."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx

from clocks import ManualClock


@dataclass(frozen=True)
class Seen:
    at: datetime
    idempotency_key: str | None
    body: Any
    timeout: dict[str, float]


@dataclass
class FakeRemote:
    """Answers from `script` in order (the last entry repeats).

    An entry is a status code, a (status, headers) pair, a (status, headers, body)
    triple, or a callable(request) raising an httpx.TransportError.
    """

    clock: ManualClock
    script: list[Any]
    latency: timedelta = timedelta(0)
    seen: list[Seen] = field(default_factory=list)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self._handle), base_url="http://remote")

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(Seen(
            at=self.clock.now(),
            idempotency_key=request.headers.get("Idempotency-Key"),
            body=json.loads(request.content) if request.content else None,
            timeout=request.extensions["timeout"],
        ))
        self.clock.advance(self.latency)
        entry = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if callable(entry):
            entry(request)
        if isinstance(entry, int):
            entry = (entry, {})
        status, headers, *rest = entry
        body = rest[0] if rest else {"status": status}
        return httpx.Response(status, headers=headers, json=body)
