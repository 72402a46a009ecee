"""The Python worker's thread pool is as large as the concurrency host.json lets in.

The Functions host hands a worker up to ``maxConcurrentCalls`` messages per Service Bus
trigger, ``maxConcurrentActivityFunctions`` activities and
``maxConcurrentOrchestratorFunctions`` orchestrator replays at once (host.json). The Python
worker runs every synchronous function on one ``ThreadPoolExecutor`` whose size is the app
setting ``PYTHON_THREADPOOL_THREAD_COUNT``; unset, on Python 3.9 and later it passes None
and the executor's default, ``min(32, os.cpu_count() + 4)``, applies
(azure_functions_worker/dispatcher.py, ``_get_sync_tp_max_workers``). Invocations beyond
the pool wait for a thread while their messages' locks run and their orders' CompleteBy
approaches. The agents block in remote calls for up to ``AGENT_CALL_TIMEOUT_S``, so the
pool holds both agents' full concurrency plus the durable functions' (docs/deploy.md,
"Concurrency").
"""

import inspect
import json

import agents.blueprint as agent_functions
from azurekit.services import catalogue
from tests.infra.checks import LOCAL_SETTINGS, REPO, bicep_app_settings, local_settings

SETTING = "PYTHON_THREADPOOL_THREAD_COUNT"
AGENTS = tuple(getattr(agent_functions, f"{name}_agent") for name in catalogue().services)
"""One agent per service of infra/services.json."""


def needed_threads(host):
    """Threads for every agent's maxConcurrentCalls plus the durable functions' limits."""
    service_bus, durable = host["extensions"]["serviceBus"], host["extensions"]["durableTask"]
    blocking = [f for f in AGENTS if not inspect.iscoroutinefunction(_unwrapped(f))]
    return (len(blocking) * service_bus["maxConcurrentCalls"]
            + durable["maxConcurrentActivityFunctions"]
            + durable["maxConcurrentOrchestratorFunctions"])


def _unwrapped(function):
    """The user function under the decorators' function builder."""
    user = getattr(function, "_function", None)
    return user.get_user_function() if user is not None else function


def host_json():
    return json.loads((REPO / "host.json").read_text())


def test_the_agents_are_synchronous_so_they_hold_a_thread_each():
    assert all(not inspect.iscoroutinefunction(_unwrapped(f)) for f in AGENTS)
    host = host_json()
    calls = host["extensions"]["serviceBus"]["maxConcurrentCalls"]
    durable = host["extensions"]["durableTask"]
    # Derived from the catalogue and host.json: a new service needs no edit here.
    assert needed_threads(host) == len(catalogue().services) * calls + durable[
        "maxConcurrentActivityFunctions"] + durable["maxConcurrentOrchestratorFunctions"]


def test_the_deployed_thread_pool_covers_the_concurrency_host_json_allows():
    assert int(bicep_app_settings()[SETTING]) >= needed_threads(host_json())


def test_local_settings_use_the_same_thread_pool():
    assert local_settings(LOCAL_SETTINGS)[SETTING] == bicep_app_settings()[SETTING]


def test_the_check_sees_more_concurrent_calls_than_threads():
    host = host_json()
    host["extensions"]["serviceBus"]["maxConcurrentCalls"] = 32
    assert int(bicep_app_settings()[SETTING]) < needed_threads(host)


# ---------------------------------------------------------------- async functions' pool
def test_async_functions_have_their_own_pool_as_large_as_one_trigger_lets_in():
    from orders.threads import OFFLOAD_THREADS

    assert OFFLOAD_THREADS == host_json()["extensions"]["serviceBus"]["maxConcurrentCalls"]


def deployed_to_thread_calls(root=REPO):
    """``asyncio.to_thread`` calls in the deployed packages (they bypass orders.threads)."""
    import ast

    from tests.test_structure import LAYER

    found = []
    for package in sorted(LAYER):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and node.attr == "to_thread":
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_deployed_async_function_uses_the_loop_default_executor():
    assert deployed_to_thread_calls() == []
