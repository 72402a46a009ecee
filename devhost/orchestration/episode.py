"""One orchestrator episode: history in, SDK replay, actions out, one commit.

Builds the context JSON the Functions host sends, calls the SDK's own orchestrator handler
and turns the actions into an :class:`~devhost.taskhub.store.EpisodeCommit`. Which actions
are scheduled and whether a returned orchestrator's instance ends is :mod:`.shim`'s answer
(the extension's shim and DTFx's executor), never decided here.

Sequence numbers: a ``call_*_with_retry`` takes one for its retry timer when an attempt
fails and one for the next attempt when it fires (as DTFx's retry interceptor), while the
SDK processes that event; so the host numbers them for the episode's first new event and
admits at most one such event per episode (:mod:`.batch`).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from azurekit.instance_ids import validate_instance_id
from devhost.app import invoke
from devhost.failures.failure_texts import (
    orchestrator_failure,
)
from devhost.orchestration.actions import (
    HTTP_ACTIVITY,
    ActionType,
    UnsupportedActionError,
    flatten,
    takes_sequence_number,
)
from devhost.orchestration.batch import CONTROL_KINDS, select_batch
from devhost.orchestration.endings import EpisodeEnding
from devhost.orchestration.entity_calls import ENTITY_ACTIONS, EntityCalls
from devhost.orchestration.event_warnings import warn_event_surprises
from devhost.orchestration.function_names import KnownFunctions, refused_call, warn_dropped
from devhost.orchestration.limits import custom_status_problem
from devhost.orchestration.nondeterminism import (
    TYPE_NAME as NON_DETERMINISM_TYPE,
)
from devhost.orchestration.nondeterminism import (
    NonDeterminismError,
    check_action,
    check_missing,
)
from devhost.orchestration.retry_timing import next_retry_delay
from devhost.orchestration.sdk_errors import sdk_failure
from devhost.orchestration.shim import rebuild, record_events, take_actions
from devhost.taskhub.events import EventType, event, format_time, parse_time
from devhost.taskhub.inputs import activity_input, json_value, orchestration_input
from devhost.taskhub.store import (
    EpisodeCommit,
    InboxMessage,
    NewActivity,
    NewInstance,
    NewMessage,
    OrchestrationWorkItem,
    empty_replay_state,
)

log = logging.getLogger(__name__)

OrchestratorHandler = Callable[[str], str]

ORCHESTRATION_FAILURE_TYPE = ("DurableTask.Core.Exceptions.OrchestrationFailureException, "
                              "DurableTask.Core")
"""``$type`` of the exception the extension throws for an orchestrator it does not know."""

REPLAY_SCHEMA = 1
"""``upperSchemaVersion`` sent to the SDK: V2 (flat action list with compound actions)."""


class Episode:
    """Compute the commit of one episode for a claimed instance.

    ``handler`` None: no such orchestrator; ``now``: OrchestratorStarted, the
    ``current_utc_datetime``; ``version_mismatch`` fails instead (``versionFailureStrategy:
    Fail``); ``functions`` None schedules every call (:mod:`.function_names`).
    """

    def __init__(self, item: OrchestrationWorkItem, handler: OrchestratorHandler | None,
                 now: datetime, max_batch: int = 1000, *, version_mismatch: str | None = None,
                 entities: EntityCalls | None = None,
                 functions: KnownFunctions | None = None) -> None:
        self.item = item
        self.inst = item.instance
        self.handler = handler
        self.now = now
        self.max_batch = max_batch
        self.version_mismatch = version_mismatch
        self.entities = entities or EntityCalls()
        self.functions = functions
        # The episode's own copy, parsed from the stored text (a JSON round trip without
        # one): several times faster than deepcopy.
        stored = item.instance.replay_state_json
        self.state = (json.loads(stored if stored is not None
                                 else json.dumps(item.instance.replay_state))
                      or empty_replay_state())
        self.commit = EpisodeCommit(custom_status=item.instance.custom_status)
        self.new_events: list[dict[str, Any]] = []  # OrchestratorStarted + new messages
        self.tail: list[dict[str, Any]] = []  # OrchestratorCompleted, ExecutionCompleted
        self.ending = EpisodeEnding(self)  # writes the attributes above when the instance ends

    def run(self) -> EpisodeCommit:
        """Run the episode and return what it writes (empty if nothing: lease released)."""
        batch, stale = select_batch(self.item, self.max_batch)
        self.commit.dropped = [m.id for m in stale]
        if self.inst.runtime_status in ("Completed", "Failed", "Terminated"):
            self.commit.dropped += [m.id for m in batch]
            return self.commit
        if not batch:
            return self.commit
        self.commit.consumed = [m.id for m in batch]
        self.new_events.append(event(EventType.OrchestratorStarted, self.now))
        if self.version_mismatch is not None:
            self.new_events += [m.event for m in batch]
            self.ending.fail_with(self.version_mismatch, "", self.version_mismatch,
                            error_type="VersionMismatch")
            return self._finish_commit()
        if batch[0].kind in CONTROL_KINDS:
            self._control(batch[0])
            return self._finish_commit()
        for m in batch:
            if m.kind == "rewind":
                continue  # only makes a rewound instance run again; not history (DTFx)
            self._host_side_retry(m.event)
            self.new_events.append(m.event)
        self._replay()
        return self._finish_commit()

    def _finish_commit(self) -> EpisodeCommit:
        # DTFx order: OrchestratorStarted, new events, scheduled work, OrchestratorCompleted,
        # ExecutionCompleted; stored as replayed (IsPlayed true).
        self.commit.new_history = [dict(e, IsPlayed=True) for e in
                                   self.new_events + self.commit.new_history + self.tail]
        if self.commit.replay_state is None:
            self.commit.replay_state = self.state
        return self.commit

    def _control(self, m: InboxMessage) -> None:
        self.new_events.append(m.event)
        if m.kind == "terminate":
            # The output is the reason as the client gave it (DTFx ExecutionTerminatedEvent).
            self.ending.end("Terminated", m.event.get("Input"))
        elif m.kind == "suspend":
            # A repeat suspend is a no-op (DTFx TaskOrchestrationContext.HandleEventWhileSuspended).
            self.commit.status = "Suspended"
        elif m.kind == "resume":
            self.commit.status = "Running"

    def _next_seq(self) -> int:
        seq = self.state["next_seq"]
        self.state["next_seq"] = seq + 1
        return seq

    def _host_side_retry(self, ev: dict[str, Any]) -> None:
        kind = ev["EventType"]
        for key, r in list(self.state["retries"].items()):
            if kind == EventType.TaskCompleted and ev.get("TaskScheduledId") == r["task_id"] \
                    or kind == EventType.SubOrchestrationInstanceCompleted \
                    and ev.get("TaskScheduledId") == r["task_id"]:
                del self.state["retries"][key]
            elif kind in (EventType.TaskFailed, EventType.SubOrchestrationInstanceFailed) \
                    and ev.get("TaskScheduledId") == r["task_id"]:
                # The SDK's RetryAbleTask adds a timer now, even after the last attempt;
                # DTFx's RetryInterceptor makes that last one fire at once (next_retry_delay).
                timer_id = self._next_seq()
                r["timer_id"] = timer_id
                fire_at = self.now + next_retry_delay(r["attempt"], r["max"],
                                                      r["interval_ms"], r.get("options"))
                self._schedule_timer(timer_id, fire_at)
            elif kind == EventType.TimerFired and ev.get("TimerId") == r.get("timer_id"):
                r["timer_id"] = None
                if r["attempt"] < r["max"]:
                    r["attempt"] += 1
                    r["task_id"] = self._next_seq()
                    self._schedule_call(r["task_id"], r["action"])
                else:
                    del self.state["retries"][key]

    def context_json(self) -> str:
        """Build the orchestration trigger's context JSON as the Functions host sends it."""
        # Stored texts go in as they are: re-serialising the history cost a fifth of the CPU.
        texts = self.item.stored_events_json() + [json.dumps(e) for e in self.new_events]
        started = next((e for e in self.item.first_events() + self.new_events
                        if e["EventType"] == EventType.ExecutionStarted), {})
        parent = (started.get("ParentInstance") or {}).get("OrchestrationInstance") or {}
        rest = json.dumps({
            # The input as a JSON value, not its text (the extension's GetInputAsJson).
            "input": json_value(started.get("Input")),
            "instanceId": self.inst.instance_id,
            "isReplaying": self.item.has_history(),
            "parentInstanceId": parent.get("InstanceId"),
            "upperSchemaVersion": REPLAY_SCHEMA,
        })
        return '{"history": [' + ",".join(texts) + "], " + rest[1:]

    def _replay(self) -> None:
        if self.handler is None:
            message = (self.functions.invalid_orchestrator_message(self.inst.name)
                       if self.functions is not None else
                       f"The function '{self.inst.name}' doesn't exist, is disabled, or is "
                       "not an orchestrator function.")
            self.ending.fail(message, ORCHESTRATION_FAILURE_TYPE)
            return
        context = self.context_json()  # the host's part: its failure is not the app's
        try:
            # sys.exit() in an orchestrator fails the instance, not the host thread.
            state = json.loads(invoke.call_guarded(self.handler, context))
            error = None
        except Exception as exc:  # noqa: BLE001 - the SDK reports failure by raising
            failure = sdk_failure(exc)  # never raises, whatever the text nests
            state, error, details = failure.state, failure.message, failure.details
        too_large = custom_status_problem(state.get("customStatus"))
        if too_large is not None:
            self.ending.custom_status_too_large(too_large, error is not None)
            return
        if state.get("customStatus") is not None:
            self.commit.custom_status = json.dumps(state["customStatus"])
        if "finished" not in self.state:  # kept since the shim model; older states rebuilt
            rebuild(self.state, self.item.stored_events_json())
        record_events(self.state, self.new_events)
        try:
            atomic = flatten(state)
            shim = take_actions(self.state, state)
            actions = self._apply_actions(shim.invoked)
        except UnsupportedActionError as exc:
            self.ending.fail(str(exc))
            return
        except NonDeterminismError as exc:
            # Raised by DTFx itself, outside the extension's shim: the text alone.
            message = str(exc)
            self.ending.fail_with(message, "Unhandled exception while executing orchestration: "
                            f"{NON_DETERMINISM_TYPE}: {message}\n\t", message)
            return
        warn_event_surprises(self.inst.instance_id, self.new_events,
                             self.item.stored_events_json, atomic)
        holds = shim.holds if error is not None or state.get("isDone") else None
        if holds is not None:
            self._hold(holds, error)
        elif error is not None:
            reason, parent_details = orchestrator_failure(self.inst.name, error, details)
            self.ending.fail_with(reason, parent_details, error)
        elif state.get("isDone"):
            cont = next((a for a in actions if a["actionType"] == ActionType.ContinueAsNew),
                        None)
            if cont is not None:
                self.ending.continue_as_new(cont.get("input"))
            else:
                self.ending.end("Completed", json.dumps(state.get("output")))
        else:
            self.tail.append(event(EventType.OrchestratorCompleted, self.now))
            self.commit.status = "Running"

    def _hold(self, holds: str, error: str | None) -> None:
        """Keep a returned orchestrator's instance Running while a task is open (DTFx)."""
        self.tail.append(event(EventType.OrchestratorCompleted, self.now))
        self.commit.status = "Running"
        if not self.state.get("hold_warned"):
            self.state["hold_warned"] = True
            ending = "fails" if error is not None else "ends"
            log.warning("instance '%s': the orchestrator returned, but the instance stays "
                        "Running while %s is open: on Azure an instance %s only when none "
                        "of its tasks is open (the extension's shim awaits every action in "
                        "order, DTFx's executor counts open tasks); cancel a timer the code "
                        "no longer needs (task.cancel())", self.inst.instance_id, holds,
                        ending)

    def _apply_actions(self, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        numbered = [a for a in actions if takes_sequence_number(a)]
        known = self.state["action_ids"]
        rewound = set(self.state.get("rewound") or ())
        for index, action in enumerate(numbered):
            if index < len(known):
                seq, kind, *name = known[index]
                check_action(seq, (kind, name[0] if name else None), action,
                             functools.partial(self._scheduling_event, seq))
                if seq in rewound:  # failed before a rewind: scheduled again, same number
                    rewound.discard(seq)
                    self.state["rewound"] = sorted(rewound)
                    self._schedule_new(seq, index, action)
                elif kind == ActionType.CreateTimer and action.get("isCanceled"):
                    self.commit.cancel_timers.append(seq)
                continue
            seq = self._next_seq()
            known.append([seq, action["actionType"], action.get("functionName")])
            self._schedule_new(seq, index, action)
        if len(numbered) < len(known):
            seq, kind, *name = known[len(numbered)]
            check_missing(seq, (kind, name[0] if name else None),
                          functools.partial(self._scheduling_event, seq))
        return numbered

    def _scheduling_event(self, seq: int) -> dict[str, Any] | None:
        """Return the history's scheduling event of task ``seq`` (read only for messages)."""
        for text in self.item.stored_events_json():
            if f'"EventId": {seq},' in text:
                ev = json.loads(text)
                if ev.get("EventId") == seq:
                    return dict(ev)
        return None

    def _schedule_new(self, seq: int, index: int, action: dict[str, Any]) -> None:
        kind = ActionType(action["actionType"])
        if kind == ActionType.CreateTimer:
            fire_at = parse_time(action["fireAt"])
            self._schedule_timer(seq, fire_at, cancelled=bool(action.get("isCanceled")))
        elif kind == ActionType.ContinueAsNew:
            pass
        elif kind in ENTITY_ACTIONS:
            sent, request = self.entities.send(seq, action, self.inst, self.now)
            if kind == ActionType.CallEntity:
                self.state.setdefault("entity_ids", {})[str(seq)] = \
                    json.loads(sent["Input"])["id"]
            self.commit.new_history.append(sent)
            self.commit.messages.append(request)
        else:
            refusal = refused_call(kind, action, self.inst, self.functions)
            if refusal is not None:
                warn_dropped(self.inst.instance_id, *refusal)
                # The extension's task faulted at once: the shim's await goes on (shim.py).
                self.state.setdefault("finished", []).append(seq)
                return
            if kind in (ActionType.CallActivityWithRetry,
                        ActionType.CallSubOrchestratorWithRetry):
                opts = action["retryOptions"]
                self.state["retries"][str(index)] = {
                    "task_id": seq, "attempt": 1, "max": int(opts["maxNumberOfAttempts"]),
                    "interval_ms": int(opts["firstRetryIntervalInMilliseconds"]),
                    "options": opts, "timer_id": None, "action": action,
                }
            self._schedule_call(seq, action)

    def _schedule_timer(self, seq: int, fire_at: datetime, cancelled: bool = False) -> None:
        self.commit.new_history.append(
            event(EventType.TimerCreated, self.now, seq, FireAt=format_time(fire_at)))
        if not cancelled:
            fired = event(EventType.TimerFired, fire_at, TimerId=seq,
                          FireAt=format_time(fire_at))
            self.commit.messages.append(NewMessage(self.inst.instance_id,
                                                   self._execution_id(), "timer", fired,
                                                   fire_at, timer_id=seq))

    def _execution_id(self) -> str:
        return self.inst.execution_id

    def _schedule_call(self, seq: int, action: dict[str, Any]) -> None:
        kind = ActionType(action["actionType"])
        if kind in (ActionType.CallSubOrchestrator, ActionType.CallSubOrchestratorWithRetry):
            # Host behaviour mirrors durabletask src/DurableTask.Core/TaskOrchestrationContext.cs
            # (CreateSubOrchestrationInstanceCore): no id: <execution id>:<task id>, new per retry.
            child_id = action.get("instanceId") or ""
            if not child_id.strip():
                child_id = f"{self._execution_id()}:{seq}"
            try:
                validate_instance_id(child_id)
            except ValueError as exc:  # refused before anything is created (D2)
                self.commit.new_history.append(event(
                    EventType.SubOrchestrationInstanceCreated, self.now, seq,
                    Name=action["functionName"], InstanceId=child_id,
                    Input=orchestration_input(action)))
                self.commit.messages.append(NewMessage(
                    self.inst.instance_id, self._execution_id(), "completion",
                    event(EventType.SubOrchestrationInstanceFailed, self.now,
                          TaskScheduledId=seq, Reason=str(exc), Details=None), self.now))
                return
            child_input = orchestration_input(action)
            self.commit.new_history.append(event(
                EventType.SubOrchestrationInstanceCreated, self.now, seq,
                Name=action["functionName"], InstanceId=child_id, Input=child_input))
            self.commit.instances.append(NewInstance(child_id, action["functionName"],
                                                     child_input, seq, action.get("version")))
            return
        payload: str | None
        if kind == ActionType.CallHttp:
            name, payload = HTTP_ACTIVITY, json.dumps(action["httpRequest"])
        else:
            name, payload = action["functionName"], activity_input(action)
        self.commit.new_history.append(
            event(EventType.TaskScheduled, self.now, seq, Name=name, Input=payload))
        self.commit.activities.append(NewActivity(seq, name, payload))
