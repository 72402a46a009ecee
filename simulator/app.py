"""HTTP app of the simulated remote services (Starlette), with an admin surface.

Its endpoints, answers and the path of a request (counted, then faults, then at most once
per ``Idempotency-Key``) are in docs/simulator.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from azurekit.services import catalogue
from clocks import Clock
from simulator.config import FaultUpdate, SimulatorConfig, describe_errors
from simulator.faults import FaultInjector, FaultKind
from simulator.guard import LOOPBACK_HOSTS, HostGuard
from simulator.ledger import IdempotentResult, Ledger
from simulator.operations import OPERATIONS, Call, implementation

logger = logging.getLogger(__name__)

MAX_KEY_LENGTH = 255

Sleep = Callable[[float], Awaitable[None]]


class NoAnswer(Response):
    """The black hole: a response never sent, holding the request open until the client leaves."""

    def __init__(self) -> None:
        super().__init__(status_code=599)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Wait for ``http.disconnect`` and send nothing."""
        while (await receive())["type"] != "http.disconnect":
            pass


def _error(status: int, code: str, message: str, retry_after_s: int | None = None) -> Response:
    headers = {"Retry-After": str(retry_after_s)} if retry_after_s is not None else None
    return JSONResponse({"error": code, "message": message}, status, headers=headers)


def _fingerprint(method: str, path: str, body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


class _Simulator:
    """The request pipeline shared by the four business endpoints."""

    def __init__(self, faults: FaultInjector, clock: Clock, ledger: Ledger, sleep: Sleep):
        self.faults = faults
        self.clock = clock
        self.ledger = ledger
        self.sleep = sleep

    async def handle(
        self, request: Request, service: str, operation: str, body_model: type[BaseModel],
    ) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw, parse_float=Decimal) if raw.strip() else {}
        except ValueError:
            body = None
        order_key = body.get("orderId") if isinstance(body, dict) else None
        order_key = order_key if isinstance(order_key, str) else ""
        ordinal = await anyio.to_thread.run_sync(
            self.ledger.record_request, service, order_key, operation
        )
        key = request.headers.get("Idempotency-Key", "")
        if not key.strip():
            return _error(400, "missing_idempotency_key", "Idempotency-Key: header required")
        if len(key) > MAX_KEY_LENGTH:
            return _error(400, "invalid_idempotency_key",
                          f"Idempotency-Key: at most {MAX_KEY_LENGTH} characters")
        if not isinstance(body, dict):
            return _error(400, "invalid_body", "body: must be a JSON object")
        try:
            validated = body_model.model_validate(body)
        except ValidationError as exc:
            return _error(400, "invalid_body", describe_errors(exc))
        call = Call(service, operation, order_key, validated)
        fingerprint = _fingerprint(request.method, request.url.path, body)
        return await self._answer(call, key, fingerprint, ordinal)

    async def _answer(self, call: Call, key: str, fingerprint: str, ordinal: int) -> Response:
        verdict = self.faults.decide(call.service, call.order_key, ordinal, call.operation)
        latency_s = self.faults.latency_s(call.service)
        if latency_s > 0:
            await self.sleep(latency_s)
        if verdict.kind is FaultKind.BLACK_HOLE:
            if verdict.performs_effect:
                await self._run(call, key, fingerprint)
            logger.info("black hole: %s %s order %s key %s (effect performed: %s)",
                        call.service, call.operation, call.order_key, key,
                        verdict.performs_effect)
            return NoAnswer()
        if verdict.kind is not FaultKind.PASS:
            assert verdict.status is not None and verdict.reason is not None
            logger.info("fault %s: %s %s order %s -> %s", verdict.kind, call.service,
                        call.operation, call.order_key, verdict.status)
            return _error(verdict.status, verdict.reason,
                          f"orderId: {call.order_key!r} met simulated fault {verdict.kind}",
                          verdict.retry_after_s)
        result = await self._run(call, key, fingerprint)
        headers = {"Idempotent-Replayed": "true"} if result.replayed else None
        return JSONResponse(result.body, result.status, headers=headers)

    async def _run(self, call: Call, key: str, fingerprint: str) -> IdempotentResult:
        now = self.clock.now()
        run_operation = OPERATIONS[call.operation]
        return await anyio.to_thread.run_sync(
            lambda: self.ledger.run_idempotent(
                service=call.service, key=key, fingerprint=fingerprint, now=now,
                operation=lambda conn: run_operation(conn, call, key, now),
            )
        )


def create_app(
    config: SimulatorConfig | FaultUpdate | None,
    clock: Clock,
    ledger_path: str | Path,
    *,
    sleep: Sleep | None = None,
    retention: timedelta | None = None,
    purge_every_s: float = 3600.0,
    hosts: Iterable[str] = LOOPBACK_HOSTS,
) -> Starlette:
    """Build the simulator app; ``app.state.ledger`` and ``app.state.faults`` give direct access.

    ``config`` None injects no faults (a :class:`FaultUpdate` applies to the defaults at
    ``clock.now()``); ``sleep`` is the async sleep of added latency. ``retention`` None keeps
    every ledger row, else older rows are purged at start and every ``purge_every_s``.
    ``hosts``: the host names it answers to (:class:`simulator.guard.HostGuard`).
    """
    if config is None:
        config = SimulatorConfig()
    elif isinstance(config, FaultUpdate):
        config = SimulatorConfig().updated(config, clock.now())
    ledger = Ledger(ledger_path)
    faults = FaultInjector(config, clock)
    sim = _Simulator(faults, clock, ledger, sleep or anyio.sleep)

    def business(service: str, operation: str) -> list[Route]:
        impl = implementation(operation)

        async def endpoint(request: Request) -> Response:
            return await sim.handle(request, service, impl.kind, impl.body)

        path = catalogue().operation(service, operation).path
        return [Route(path, endpoint, methods=["POST"], name=impl.kind),
                Route(f"/{service}{path}", endpoint, methods=["POST"])]

    async def get_faults(request: Request) -> Response:
        return JSONResponse(faults.config.model_dump(mode="json"))

    async def post_faults(request: Request) -> Response:
        try:
            update = FaultUpdate.model_validate_json(await request.body() or b"{}")
        except ValidationError as exc:
            return _error(400, "invalid_fault_config", describe_errors(exc))
        new = faults.update(update)
        logger.info("fault knobs changed: %s", update.model_dump(exclude_none=True))
        return JSONResponse(new.model_dump(mode="json"))

    async def reset_faults(request: Request) -> Response:
        new = faults.reset()
        logger.info("fault knobs reset: no faults")
        return JSONResponse(new.model_dump(mode="json"))

    async def get_ledger(request: Request) -> Response:
        q = request.query_params
        effects = await anyio.to_thread.run_sync(
            lambda: ledger.side_effects(
                service=q.get("service"), order_key=q.get("orderId"), kind=q.get("kind")
            )
        )
        return JSONResponse({"sideEffects": [e.to_json() for e in effects]})

    async def get_stats(request: Request) -> Response:
        counts = await anyio.to_thread.run_sync(ledger.request_counts)
        effects = await anyio.to_thread.run_sync(ledger.effect_counts)
        return JSONResponse({
            "requests": [{"service": c.service, "orderId": c.order_key,
                          "operation": c.operation, "count": c.count} for c in counts],
            "sideEffects": [{"service": s, "kind": k, "orderId": o, "count": n}
                            for (s, k, o), n in sorted(effects.items())],
        })

    async def purge(keep: timedelta) -> None:
        deleted = await anyio.to_thread.run_sync(
            lambda: ledger.purge_before(clock.now() - keep))
        if deleted:
            logger.info("ledger retention: deleted %d rows older than %s", deleted, keep)

    async def purge_loop(keep: timedelta) -> None:
        while True:
            await anyio.sleep(purge_every_s)
            await purge(keep)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            if retention is not None:
                await purge(retention)
                tasks.start_soon(purge_loop, retention)
            yield
            tasks.cancel_scope.cancel()
        ledger.close()

    app = Starlette(
        routes=[
            *(route for service, spec in catalogue().services.items()
              for op in spec.operations for route in business(service, op)),
            Route("/_admin/faults", get_faults, methods=["GET"]),
            Route("/_admin/faults", post_faults, methods=["POST"]),
            Route("/_admin/faults", reset_faults, methods=["DELETE"]),
            Route("/_admin/ledger", get_ledger, methods=["GET"]),
            Route("/_admin/stats", get_stats, methods=["GET"]),
        ],
        lifespan=lifespan,
        # A server span per business request, a child of the caller's ``traceparent``: the
        # service continues the order's trace, as a real one with OpenTelemetry does.
        middleware=[Middleware(HostGuard, hosts=hosts),
                    Middleware(OpenTelemetryMiddleware, excluded_urls="/_admin",
                               exclude_spans=["receive", "send"])],
    )
    app.state.ledger = ledger
    app.state.faults = faults
    return app
