"""Fast paths for two pieces of per-call work in the SDK's replay, identical in result.

The host lets the Durable Functions SDK replay every episode, so the SDK's fixed cost per
orchestrator call is the host's. A profile of chain-5 (five activities in sequence) put
two pieces of it at about 40% of that cost, neither part of the replay's logic:

* ``dateutil`` parsing every history ``Timestamp`` (see :mod:`.timestamps`);
* ``TaskOrchestrationExecutor.__init__`` building a new ``namedtuple`` *class*
  (``SetTaskValuePayload``) on every call, which costs about 0.25 ms, as much as replaying
  six history events. The class only carries two constant fields to build a lookup table;
  memoising ``namedtuple`` for that module returns one class for the same arguments, so
  each call builds the same table as before.

:func:`install` applies both, once per process; the SDK's own code still does the replay.
"""

from __future__ import annotations

import functools
import importlib

from devhost.orchestration import timestamps

_EXECUTOR_MODULE = "azure.durable_functions.models.TaskOrchestrationExecutor"


def install() -> None:
    """Install the timestamp and executor fast paths into the SDK (idempotent)."""
    timestamps.install()
    module = importlib.import_module(_EXECUTOR_MODULE)
    if not hasattr(module.namedtuple, "cache_info"):
        # Replace the module's global (a module declares no attributes to assign).
        vars(module)["namedtuple"] = functools.lru_cache(maxsize=16)(module.namedtuple)
