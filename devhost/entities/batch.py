"""Run one batch of entity operations through the SDK's own entity handler (D10).

The SDK's ``Entity.create`` handler runs each operation in order, catching each one's
exception as its error result; this module turns its answer into an
:class:`~devhost.taskhub.entity_queue.EntityCommit` (state, responses, signals). If the
handler itself fails, every operation fails with that error and the state is kept, as the
extension does: no batch fails in a loop (L3).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from devhost.app import invoke
from devhost.taskhub.entity_messages import (
    REQUEST_KIND,
    RESPONSE_KIND,
    batch_context,
    request_event,
    request_message,
    response_event,
    scheduler_id,
)
from devhost.taskhub.entity_queue import EntityCommit, EntityWorkItem
from devhost.taskhub.records import NewMessage

log = logging.getLogger("devhost.entities")

EntityHandler = Callable[[str], str]


def missing_function_error(name: str, known: list[str]) -> str:
    """Return the extension's message for an entity name no function implements."""
    names = "', '".join(known)
    listed = (f"The following are the known entity functions: '{names}'."
              if known else "No entity functions are currently registered!")
    return (f"The function '{name}' doesn't exist, is disabled, or is not an entity "
            f"function. Additional info: {listed}")


def run_batch(item: EntityWorkItem, handler: EntityHandler | None, now: datetime,
              known: list[str] | None = None) -> EntityCommit:
    """Run a claimed entity's batch and return what it writes (``handler`` None: all fail)."""
    requests = [message for _, message in item.requests]
    if handler is None:
        error = json.dumps(missing_function_error(item.name, known or []))
        return _commit(item, item.exists, item.state,
                       [{"isError": True, "result": error}] * len(requests), [], now)
    try:
        answer = json.loads(invoke.call_guarded(
            handler, batch_context(item.name, item.key, item.exists, item.state, requests)))
        results = answer["results"]
        if len(results) != len(requests):
            raise ValueError(f"the entity function returned {len(results)} results for "
                             f"{len(requests)} operations")
        exists, state = bool(answer["entityExists"]), answer.get("entityState")
        signals = answer.get("signals") or []
    except Exception as exc:  # noqa: BLE001 - the whole batch fails, state unchanged
        log.warning("entity %s: batch of %d operations failed: %s", item.entity_id,
                    len(requests), exc, exc_info=True)
        error = json.dumps(f"{type(exc).__name__}: {exc}")
        return _commit(item, item.exists, item.state,
                       [{"isError": True, "result": error}] * len(requests), [], now)
    return _commit(item, exists, state, results, signals, now)


def _commit(item: EntityWorkItem, exists: bool, state: str | None,
            results: list[dict[str, Any]], signals: list[dict[str, Any]],
            now: datetime) -> EntityCommit:
    commit = EntityCommit(item, exists, state)
    for (_, request), result in zip(item.requests, results, strict=True):
        if result.get("isError"):
            log.info("entity %s: operation '%s' failed: %s", item.entity_id,
                     request.get("op"), result.get("result"))
        if request.get("signal") or not request.get("parent"):
            continue
        commit.messages.append(NewMessage(
            request["parent"], request.get("parentExecution"), RESPONSE_KIND,
            response_event(request["id"], result.get("result"), bool(result.get("isError")),
                           now), now))
    for signal in signals:
        target = signal["target"]
        message = request_message(signal["name"], signal.get("input"), signal=True,
                                  parent=item.entity_id, parent_execution=None, now=now,
                                  request_id=str(uuid.uuid4()))
        commit.messages.append(NewMessage(scheduler_id(target["name"], target["key"]), None,
                                          REQUEST_KIND, request_event(message, now), now))
    return commit
