"""The Functions host's ``GET /admin/host/status``: whether the whole host is up yet.

As ``HostController.GetHostStatus`` of the Functions host
(azure-functions-host, ``src/WebJobs.Script.WebHost/Controllers/HostController.cs``), the
answer is 200 with the host's ``state``, a ``ScriptHostState`` name, and its
``processUptime`` in milliseconds. The local host reports ``Initialized`` while it serves HTTP
but not yet every process of its functions (``devhost start`` with workers still starting),
``Running`` once all do, and ``Stopping`` after a stop was asked for: so a client that waits
for ``Running`` sends no work to a host still starting up. The fields the Functions host fills
from its deployment (``id``, ``platformVersion``, ``instanceId``, ``computerName``,
``extensionBundle``) are left out rather than made up; ``version`` is the local host's own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib import metadata

import psutil
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

STATES = ("Default", "Starting", "Initialized", "Error", "Running", "Offline", "Stopping",
          "Stopped")
"""The Functions host's ``ScriptHostState`` names, in the order a host passes them."""

STATUS_PATH = "/admin/host/status"
"""Path of the host status (the Functions host's, without the ``/api`` prefix)."""


def own_version() -> str:
    """Return the version of the installed ``durable-devhost`` distribution, or ``"dev"``.

    ``"dev"`` when the local host runs from a source folder, not from its wheel.
    """
    try:
        return metadata.version("durable-devhost")
    except metadata.PackageNotFoundError:
        return "dev"


def admin_routes(state: Callable[[], str]) -> list[Route]:
    """Return the host status route; ``state()`` gives the current ``ScriptHostState`` name.

    Raises
    ------
    ValueError
        From the handler, if ``state()`` returns a name not in :data:`STATES` (a host bug).
    """
    started_s = psutil.Process().create_time()  # seconds since the epoch, as time.time()
    version = own_version()

    async def host_status(request: Request) -> Response:
        current = state()
        if current not in STATES:
            raise ValueError(f"host state {current!r} is not a ScriptHostState")
        uptime_ms = max(0, int((time.time() - started_s) * 1000))
        return JSONResponse({"state": current, "version": version,
                             "processUptime": uptime_ms})

    return [Route(STATUS_PATH, host_status, methods=["GET"])]
