"""Shared helpers of the HTTP API tests: a real uvicorn server, SDK calls, canned history."""

import json
import socket
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
import uvicorn
from azure.durable_functions import DurableOrchestrationClient

from clocks import ManualClock
from devhost.app import invoke
from devhost.http_api import client_binding_json, create_http_app, in_process
from devhost.run.host import HTTP_SERVER_OPTIONS
from devhost.taskhub.events import EventType, event
from devhost.taskhub.store import EpisodeCommit, TaskHub

WEBHOOK = "/runtime/webhooks/durabletask"


@dataclass
class Server:
    base_url: str
    taskhub: TaskHub
    clock: ManualClock
    woken: list[str] = field(default_factory=list)
    """Instances the API said have new work (its ``on_instance_work`` hook), in order."""
    in_process_api: Any = None
    """The in-process API of the mounted app (answers only once registered)."""

    @property
    def api(self) -> str:
        return self.base_url + WEBHOOK

    def client(self) -> DurableOrchestrationClient:
        return DurableOrchestrationClient(client_binding_json(self.taskhub.name, self.base_url))


class Listener:
    """One real uvicorn server on a free 127.0.0.1 port, in a thread, for the whole session.

    Each test mounts its own app (own task hub file and clock) with :meth:`mount`; the
    server forwards every request to the app mounted last. The socket is bound and
    listening before the thread starts, so early requests wait in the backlog.
    """

    def __init__(self) -> None:
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when
        # the protocol says TCP; with proto 0, Nagle + delayed ACK add ~40 ms per request.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.app = None
        self.mounted_api: in_process.InProcessApi | None = None
        config = uvicorn.Config(self._asgi, interface="asgi3", **HTTP_SERVER_OPTIONS)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        daemon=True)
        self._thread.start()

    async def _asgi(self, scope, receive, send):
        await self.app(scope, receive, send)

    def mount(self, taskhub: TaskHub, clock: ManualClock, on_start=None, **kwargs) -> Server:
        server = Server(self.base_url, taskhub, clock)

        def hook(instance_id: str) -> None:
            server.woken.append(instance_id)
            if on_start is not None:
                on_start(instance_id)

        self.app = create_http_app(taskhub, base_url=self.base_url, on_instance_work=hook,
                                   **kwargs)
        server.in_process_api = self.mounted_api = in_process.InProcessApi(self.app,
                                                                           self.base_url)
        return server

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class InProcessTransport(httpx.BaseTransport):
    """An httpx transport that hands each request to an in-process API (no socket).

    ``api_of()`` returns the API at the time of the request (the app a test mounted last);
    a URL outside its webhook base (an app route) goes over HTTP, as the host's do.
    """

    def __init__(self, api_of) -> None:
        self.api_of = api_of
        self.over_http = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        api = self.api_of()
        if not api.serves(str(request.url)):
            return self.over_http.handle_request(request)
        raw_path = request.url.raw_path.split(b"?", 1)[0].decode("ascii")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        answer = run(api.request(request.method, raw_path,
                                      request.url.query.decode("ascii"), headers,
                                      request.read()))
        return httpx.Response(answer.status, headers=answer.headers, content=answer.body,
                              request=request)

    def close(self) -> None:
        self.over_http.close()


def run(coro):
    """Run one SDK coroutine on the shared worker loop, as app code runs it.

    The SDK keeps one process-wide aiohttp session bound to the loop that made it, so
    every caller in this process must use the same loop (as in the Python worker).
    """
    return invoke.run(coro)


def claim(taskhub: TaskHub, instance_id: str):
    """Claim the given instance's pending work (other claimed instances are released)."""
    held = []
    try:
        while True:
            items = taskhub.claim_orchestrations("test-worker", timedelta(minutes=5))
            assert items, f"instance {instance_id!r} has no queued work"
            [item] = items
            if item.instance.instance_id == instance_id:
                return item
            held.append(item)
    finally:
        for other in held:
            taskhub.release_orchestration(other)


def queued_events(taskhub: TaskHub, instance_id: str) -> list[dict]:
    """Return the events queued for an instance (and leave them queued)."""
    item = claim(taskhub, instance_id)
    taskhub.release_orchestration(item)
    return [m.event for m in item.messages]


def canned_history(clock: ManualClock, started: dict) -> list[dict]:
    """A plausible history: one activity, one timer, one external event, then completion."""
    def at(kind, event_id=-1, **fields):
        ev = event(kind, clock.now(), event_id, **fields)
        clock.advance(timedelta(seconds=1))
        return ev

    fire_at = "2030-01-01T01:00:00.000000Z"
    return [
        dict(started, IsPlayed=True),
        at(EventType.OrchestratorStarted),
        at(EventType.TaskScheduled, 0, Name="SayHello", Input='"Tokyo"'),
        at(EventType.OrchestratorCompleted),
        at(EventType.OrchestratorStarted),
        at(EventType.TaskCompleted, TaskScheduledId=0, Result='"Hello Tokyo!"'),
        at(EventType.TimerCreated, 1, FireAt=fire_at),
        at(EventType.OrchestratorCompleted),
        at(EventType.OrchestratorStarted),
        at(EventType.TimerFired, TimerId=1, FireAt=fire_at),
        at(EventType.EventRaised, Name="Approval", Input='{"ok": true}'),
        at(EventType.TaskScheduled, 2, Name="Charge", Input='{"amount": 5}'),
        at(EventType.OrchestratorCompleted),
        at(EventType.OrchestratorStarted),
        at(EventType.TaskFailed, TaskScheduledId=2, Reason="card declined", Details="trace"),
        at(EventType.OrchestratorCompleted),
        at(EventType.ExecutionCompleted, OrchestrationStatus="Completed",
           Result='["Hello Tokyo!"]'),
    ]


def finish(taskhub: TaskHub, clock: ManualClock, instance_id: str, status: str = "Completed",
           output: Any = "done") -> list[dict]:
    """Write a finished execution for a Pending instance, as a worker's episode would."""
    item = claim(taskhub, instance_id)
    started = next(m.event for m in item.messages
                   if m.event["EventType"] == EventType.ExecutionStarted)
    history = canned_history(clock, started)
    commit = EpisodeCommit(consumed=[m.id for m in item.messages], new_history=history,
                           status=status, output=json.dumps(output), purge_execution=True)
    assert taskhub.commit_episodes([(item, commit)]) == [True]
    return history


def set_running_status(taskhub: TaskHub, clock: ManualClock, instance_id: str,
                       status: str) -> None:
    """Process the instance's queued messages as one episode that leaves it in ``status``."""
    item = claim(taskhub, instance_id)
    history = [dict(event(EventType.OrchestratorStarted, clock.now()), IsPlayed=True)]
    history += [dict(m.event, IsPlayed=True) for m in item.messages]
    commit = EpisodeCommit(consumed=[m.id for m in item.messages], new_history=history,
                           status=status)
    assert taskhub.commit_episodes([(item, commit)]) == [True]
