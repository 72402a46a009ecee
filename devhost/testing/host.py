"""A Durable Functions app on the local host in the test's own process, driven by drain mode.

:class:`DurableHost` loads the app folder as ``devhost start`` does (the same loader,
replay through the SDK, fidelity rules and warnings), on a :class:`~clocks.ManualClock`:
nothing runs until the test says :meth:`DurableHost.run_until_idle` or
:meth:`DurableHost.advance`, and a three-day timer fires in no wall time. The client speaks
the Durable HTTP API the host serves (docs/testing.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from clocks import ManualClock

WEBHOOK = "/runtime/webhooks/durabletask"
"""The Durable HTTP API's base path (as the extension serves it)."""

HttpMock = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
"""A mocked ``call_http`` answer: a DurableHttpResponse dict, or a function of the request."""


class DurableHost:
    """The app in ``app_dir`` under the local host, its task hub and queues in ``data_dir``.

    Parameters
    ----------
    app_dir : Path
        The app's folder (``host.json``; ``function_app.py`` or v1 function folders).
    data_dir : Path
        Folder of the SQLite files (a test's ``tmp_path``).
    clock : ManualClock, optional
        The host's clock; default a ManualClock at 2030-01-01T00:00Z.
    settings : dict of str to str, optional
        App settings set before the app loads (they win over ``local.settings.json``).

    Raises
    ------
    devhost.app.load_errors.AppLoadError
        If the app fails to load: one line naming the file, line or setting at fault.
    """

    def __init__(self, app_dir: str | Path, data_dir: str | Path, *,
                 clock: ManualClock | None = None, settings: dict[str, str] | None = None,
                 **host_options: Any) -> None:
        from devhost.run.runtime import build_host

        self._environ = dict(os.environ)
        os.environ.update(settings or {})
        self.clock = clock or ManualClock()
        self.host = build_host(Path(app_dir), Path(data_dir), clock=self.clock, **host_options)
        self.host.start_http()
        self.engine = self.host.engine
        self._http = httpx.Client(base_url=self.host.base_url, timeout=30.0)
        self._http_mocks: dict[str, HttpMock] = {}
        self._real_call_http: Any = None

    # ------------------------------------------------------------------ driving
    def run_until_idle(self) -> int:
        """Run every orchestration, activity, entity and message due now; return the steps."""
        return self.host.run_until_idle()

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock ``delta`` forward, firing due timers and running what they wake.

        Timers, scheduled messages and retries due within ``delta`` run at their own time, in
        order; returns the clock's new time.
        """
        self.host.run_until_idle(advance_clock=True, until=self.clock.now() + delta)
        return self.clock.now()

    def now(self) -> datetime:
        """Return the host's current time (UTC)."""
        return self.clock.now()

    # ------------------------------------------------------------------ client
    def start(self, orchestrator: str, input: Any = None, instance_id: str | None = None) -> str:
        """Start ``orchestrator`` with ``input`` (any JSON value); return its instance id.

        Sent as the SDK client's ``start_new`` sends it (its JSON text, as a JSON string), so
        the orchestrator's ``get_input()`` is ``input`` whatever its type, and the status's
        ``input`` is that text, as on Azure. (A plain HTTP client posting a bare JSON string
        instead makes ``get_input()`` fail on Azure too: docs/fidelity.md.)

        Raises
        ------
        httpx.HTTPStatusError
            If the API refuses the start (an unknown orchestrator: 400 with its reason).
        """
        path = f"{WEBHOOK}/orchestrators/{quote(orchestrator, safe='')}"
        if instance_id is not None:
            path += "/" + quote(instance_id, safe="")
        body = b"" if input is None else json.dumps(json.dumps(input))
        response = self._http.post(path, content=body,
                                   headers={"Content-Type": "application/json"})
        _raise_for(response)
        return str(response.json()["id"])

    def raise_event(self, instance_id: str, event: str, data: Any = None) -> None:
        """Raise external event ``event`` with ``data`` on an instance (HTTP 202 expected).

        ``data`` is the JSON body, as a plain HTTP client sends it: the orchestrator's
        ``wait_for_external_event`` gets that value (the SDK's own ``raise_event`` sends its
        JSON text instead, which the orchestrator gets as a string, as on Azure).
        """
        response = self._http.post(
            f"{WEBHOOK}/instances/{quote(instance_id, safe='')}/raiseEvent/"
            f"{quote(event, safe='')}", content=json.dumps(data),
            headers={"Content-Type": "application/json"})
        _raise_for(response)

    def signal_entity(self, entity: str, key: str, operation: str, input: Any = None) -> None:
        """Signal operation ``operation`` of entity ``entity@key`` with ``input``.

        The body is ``json.dumps(input)`` as a JSON string, as the SDK's ``signal_entity``
        sends it: the entity's ``get_input()`` reads that form only (docs/fidelity.md).
        """
        body = b"" if input is None else json.dumps(json.dumps(input))
        response = self._http.post(
            f"{WEBHOOK}/entities/{quote(entity, safe='')}/{quote(key, safe='')}",
            params={"op": operation}, content=body,
            headers={"Content-Type": "application/json"})
        _raise_for(response)

    def entity_state(self, entity: str, key: str) -> Any:
        """Return entity ``entity@key``'s state (None if it does not exist)."""
        response = self._http.get(
            f"{WEBHOOK}/entities/{quote(entity, safe='')}/{quote(key, safe='')}")
        if response.status_code == 404:
            return None
        _raise_for(response)
        return response.json()

    def http(self, method: str, route: str, **request: Any) -> httpx.Response:
        """Call an HTTP-triggered function at ``/api/<route>``; ``request`` goes to httpx."""
        return self._http.request(method, "/api/" + route.lstrip("/"), **request)

    def send(self, queue: str, body: Any, *, message_id: str | None = None) -> None:
        """Send a message to Service Bus queue ``queue`` (``body``: bytes, text or JSON)."""
        if not isinstance(body, bytes | str):
            body = json.dumps(body)
        self.engine.send(queue, body, message_id=message_id)

    def status(self, instance_id: str) -> dict[str, Any]:
        """Return the instance's status as the Durable HTTP API answers it.

        Raises
        ------
        KeyError
            If no instance has that id.
        """
        return self._get_status(instance_id, {})

    def history(self, instance_id: str) -> dict[str, Any]:
        """Return the status with ``historyEvents`` (``showHistory``, ``showHistoryOutput``).

        The same JSON ``devhost replay`` reads: save it to replay a later version of the code.
        """
        return self._get_status(instance_id, {"showHistory": "true",
                                              "showHistoryOutput": "true"})

    def _get_status(self, instance_id: str, params: dict[str, str]) -> dict[str, Any]:
        response = self._http.get(f"{WEBHOOK}/instances/{quote(instance_id, safe='')}",
                                  params=params)
        if response.status_code == 404:
            raise KeyError(f"no instance with id '{instance_id}'")
        _raise_for(response)
        return dict(response.json())

    # ------------------------------------------------------------------ mocks
    def mock_activity(self, name: str, result: Any) -> None:
        """Make activity ``name`` return ``result`` (or ``result(input)`` if callable).

        Raises
        ------
        KeyError
            If the app has no activity of that name (names are compared ignoring case).
        """
        activities = self.host.index.activities
        key = next((k for k in activities if k.lower() == name.lower()), None)
        if key is None:
            raise KeyError(f"the app has no activity '{name}'; its activities: "
                           f"{', '.join(sorted(activities)) or 'none'}")

        def mocked(**kwargs: Any) -> Any:
            return result(*kwargs.values()) if callable(result) else result

        activities[key] = dataclasses.replace(activities[key], func=mocked)

    def mock_http(self, url: str, response: HttpMock) -> None:
        """Answer ``call_http`` requests whose URI starts with ``url`` with ``response``.

        ``response`` is a DurableHttpResponse dict (``statusCode``, ``headers``, ``content``)
        or a function of the DurableHttpRequest dict; other URIs are called for real.
        """
        from devhost.workers import activities

        if self._real_call_http is None:
            self._real_call_http = activities.call_http
            real, mocks = self._real_call_http, self._http_mocks

            def call_http(request: dict[str, Any]) -> dict[str, Any]:
                uri = str(request.get("uri", ""))
                match = max((u for u in mocks if uri.startswith(u)), key=len, default=None)
                if match is None:
                    return dict(real(request))
                answer = mocks[match]
                found = answer(request) if callable(answer) else answer
                return {"statusCode": 200, "headers": {}, "content": None, **found}

            activities.call_http = call_http
        self._http_mocks[url] = response

    # ------------------------------------------------------------------ replay
    def replay(self, history: dict[str, Any]) -> Any:
        """Replay a recorded history (:meth:`history`'s JSON) against the loaded code.

        Returns a :class:`devhost.replay.check.ReplayResult` (``clean``, ``line()``).
        """
        from devhost.replay.check import replay_history
        from devhost.replay.history import parse_history

        return replay_history(self.host.index, parse_history(history), "history")

    def close(self) -> None:
        """Stop the host, undo the mocks and give the process its environment back."""
        if self._real_call_http is not None:
            from devhost.workers import activities

            activities.call_http = self._real_call_http
        self._http.close()
        self.host.stop()
        if os.environ != self._environ:
            os.environ.clear()
            os.environ.update(self._environ)

    def __enter__(self) -> DurableHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _raise_for(response: httpx.Response) -> None:
    """Raise httpx.HTTPStatusError with the API's reason in the message for a 4xx/5xx."""
    if response.is_error:
        raise httpx.HTTPStatusError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:500]}",
            request=response.request, response=response)
