"""What every API handler shares; blocking task hub calls run in a thread pool."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from starlette.responses import JSONResponse

from devhost.app.backends import Backend
from devhost.http_api.errors import BadRequest
from devhost.http_api.history_view import json_value
from devhost.http_api.status import IN_PROGRESS, status_json
from devhost.http_api.urls import check_status_payload
from devhost.orchestration.function_names import KnownFunctions
from devhost.taskhub.store import InstanceNotFoundError, InstanceRecord, TaskHub

T = TypeVar("T")

API_THREADS = 40
"""Blocking task hub calls of the API at once (as many as Starlette's pool allows)."""

CHECK_STATUS_RETRY_AFTER_S = 10
"""``Retry-After`` of a check-status (202) answer, in seconds (the extension's value)."""


@dataclass
class ApiContext:
    """Shared state of the API handlers (fields as in ``create_http_app``)."""

    taskhub: TaskHub
    base_url: str
    orchestrator_names: Collection[str] | None = None
    on_instance_work: Callable[[str], None] | None = None
    replace_running: bool = False
    backend: Backend = field(default_factory=Backend)
    """The storage backend: its payload limit applies to starts and events."""
    _pool: ThreadPoolExecutor = field(
        init=False, repr=False, compare=False,
        default_factory=lambda: ThreadPoolExecutor(API_THREADS, "devhost-api"))

    async def call(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking task hub call in the thread pool.

        The loop's executor, not anyio's worker threads: a third less CPU per call.
        """
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, partial(func, *args, **kwargs))

    async def instance(self, instance_id: str) -> InstanceRecord:
        """Return the instance or raise :class:`InstanceNotFoundError` (HTTP 404)."""
        record = await self.call(self.taskhub.get_instance, instance_id)
        if record is None:
            raise InstanceNotFoundError(f"No instance with ID '{instance_id}' found.")
        return record

    def check_orchestrator(self, name: str) -> None:
        """Raise BadRequest unless ``name`` is a known orchestrator (ignoring case; None: any).

        Text of the extension (``DurableClient.StartNewAsync``, ``ThrowIfFunctionDoesNotExist``).
        """
        if self.orchestrator_names is None:
            return
        known = KnownFunctions.of(self.orchestrator_names, ())
        if not known.has_orchestrator(name):
            raise BadRequest(known.invalid_orchestrator_message(name))

    async def create(self, name: str, instance_id: str, input_json: str | None,
                     version: str | None) -> None:
        """Create an instance of a stored input, call the hook; InstanceExistsError (500).

        Raises BadRequest (400) for an input over the backend's payload limit.
        """
        self.check_payload(f"input of orchestration '{name}'", input_json)
        await self.call(self.taskhub.create_instance, name, instance_id, input_json,
                        version=version, stored=True, replace_running=self.replace_running)
        self.work_for(instance_id)

    def check_payload(self, what: str, text: str | None) -> None:
        """Raise BadRequest (400) when the backend refuses ``text`` as ``what``; nothing written."""
        problem = self.backend.payload_problem(what, text)
        if problem is not None:
            raise BadRequest(problem)

    def work_for(self, instance_id: str) -> None:
        """Call the ``on_instance_work`` hook: the instance has new work (a work loop may sleep)."""
        if self.on_instance_work is not None:
            self.on_instance_work(instance_id)

    def check_status_response(self, instance_id: str) -> JSONResponse:
        """Return the documented HTTP 202 answer with the instance's management URLs."""
        payload = check_status_payload(self.base_url, self.taskhub.name, instance_id)
        return JSONResponse(payload, status_code=202, headers={
            "Location": payload["statusQueryGetUri"],
            "Retry-After": str(CHECK_STATUS_RETRY_AFTER_S),
        })

    async def wait_or_check_status(self, instance_id: str, timeout_s: float | None,
                                   interval_s: float | None) -> JSONResponse:
        """Answer a start: 202 check-status, or with both waits (wall seconds) the ended answer.

        200 with the output if it completed in time, with the status if it failed or was terminated.
        """
        if timeout_s is None or interval_s is None:
            return self.check_status_response(instance_id)
        deadline = time.monotonic() + timeout_s
        while True:
            record = await self.call(self.taskhub.get_instance, instance_id)
            if record is not None and record.runtime_status not in IN_PROGRESS:
                if record.runtime_status == "Completed":
                    return JSONResponse(json_value(record.output), status_code=200)
                return JSONResponse(status_json(record), status_code=200)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self.check_status_response(instance_id)
            await asyncio.sleep(min(interval_s, remaining))
