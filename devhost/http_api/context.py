"""What every Durable HTTP API handler shares: the task hub, the URLs and the start hook.

Task hub calls are blocking SQLite transactions (with a busy timeout), so handlers run them
in Starlette's thread pool instead of on the event loop; :class:`ApiContext` wraps that.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from devhost.http_api.errors import BadRequest
from devhost.http_api.history_view import json_value
from devhost.http_api.status import IN_PROGRESS, status_json
from devhost.http_api.urls import check_status_payload
from devhost.orchestration.function_names import KnownFunctions
from devhost.taskhub.store import InstanceNotFoundError, InstanceRecord, TaskHub

T = TypeVar("T")

CHECK_STATUS_RETRY_AFTER_S = 10
"""``Retry-After`` of a check-status (202) answer, in seconds (the extension's value)."""


@dataclass
class ApiContext:
    """Shared state of the API handlers.

    Attributes
    ----------
    taskhub : TaskHub
        The task hub the API reads and writes.
    base_url : str
        The host's base URL (``http://127.0.0.1:{port}``), used in returned URLs.
    orchestrator_names : collection of str or None
        Orchestrator functions the app defines; None accepts any name.
    on_start_instance : callable or None
        Called with the instance id after an instance is created (start, restart).
    replace_running : bool
        A start with the id of an instance that has not ended replaces it (host.json
        ``overridableExistingInstanceStates: AnyState``) instead of failing.
    """

    taskhub: TaskHub
    base_url: str
    orchestrator_names: Collection[str] | None = None
    on_start_instance: Callable[[str], None] | None = None
    replace_running: bool = False

    async def call(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking task hub call in the thread pool."""
        return await run_in_threadpool(func, *args, **kwargs)

    async def instance(self, instance_id: str) -> InstanceRecord:
        """Return the instance or raise :class:`InstanceNotFoundError` (HTTP 404)."""
        record = await self.call(self.taskhub.get_instance, instance_id)
        if record is None:
            raise InstanceNotFoundError(f"No instance with ID '{instance_id}' found.")
        return record

    def check_orchestrator(self, name: str) -> None:
        """Refuse a start for a function the app does not define as an orchestrator.

        Names compare ignoring case (:func:`devhost.app.loader.find_function`); the text
        is the extension's (``DurableClient.StartNewAsync``, ``ThrowIfFunctionDoesNotExist``).

        Raises
        ------
        BadRequest
            If ``orchestrator_names`` is known and does not contain ``name``.
        """
        if self.orchestrator_names is None:
            return
        known = KnownFunctions.of(self.orchestrator_names, ())
        if not known.has_orchestrator(name):
            raise BadRequest(known.invalid_orchestrator_message(name))

    async def create(self, name: str, instance_id: str, input_json: str | None,
                     version: str | None) -> None:
        """Create an instance from a stored input and call the hook.

        Raises
        ------
        InstanceExistsError
            HTTP 500 with DTFx's text if an instance of that id has not ended (unless
            :attr:`replace_running`).
        """
        await self.call(self.taskhub.create_instance, name, instance_id, input_json,
                        version=version, stored=True, replace_running=self.replace_running)
        if self.on_start_instance is not None:
            self.on_start_instance(instance_id)

    def check_status_response(self, instance_id: str) -> JSONResponse:
        """Return the documented HTTP 202 answer with the instance's management URLs."""
        payload = check_status_payload(self.base_url, self.taskhub.name, instance_id)
        return JSONResponse(payload, status_code=202, headers={
            "Location": payload["statusQueryGetUri"],
            "Retry-After": str(CHECK_STATUS_RETRY_AFTER_S),
        })

    async def wait_or_check_status(self, instance_id: str, timeout_s: float | None,
                                   interval_s: float | None) -> JSONResponse:
        """Answer a start/restart: wait for completion if asked, else check-status (202).

        Parameters
        ----------
        instance_id : str
            The new instance.
        timeout_s, interval_s : float or None
            Query parameters ``timeout`` and ``pollingInterval`` (seconds of wall time: an
            HTTP wait, not orchestration time). Both are needed to wait.

        Returns
        -------
        JSONResponse
            200 with the output if the instance completed in time; 200 with the status
            payload if it failed or was terminated; otherwise the check-status 202.
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
