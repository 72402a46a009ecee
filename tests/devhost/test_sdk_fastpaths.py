"""The SDK fast paths change cost, not results."""

import importlib

from devhost.orchestration import sdk_fastpaths

executor_module = importlib.import_module(
    "azure.durable_functions.models.TaskOrchestrationExecutor")


def test_executor_table_is_built_as_before_with_one_payload_class():
    sdk_fastpaths.install()
    sdk_fastpaths.install()  # idempotent: not wrapped twice
    assert not hasattr(executor_module.namedtuple.__wrapped__, "cache_info")
    a = executor_module.TaskOrchestrationExecutor()
    b = executor_module.TaskOrchestrationExecutor()
    table_a, table_b = a.event_to_SetTaskValuePayload, b.event_to_SetTaskValuePayload
    assert table_a == table_b
    assert {(k, v.is_success, v.task_id_key) for k, v in table_a.items()} == {
        (k, v[0], v[1]) for k, v in table_b.items()}
    assert len({type(v) for v in table_a.values()} | {type(v) for v in table_b.values()}) == 1
    failed = [k for k, v in table_a.items() if not v.is_success]
    assert len(failed) == 2 and all(table_a[k].task_id_key == "TaskScheduledId" for k in failed)
