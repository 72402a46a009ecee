"""Replay recorded histories through the SDK against the app's current code (D4).

Each history runs through the app's orchestrator handler as the host runs an episode
(:mod:`devhost.orchestration.episode`: the same context JSON, the same SDK call); the
actions it answers are checked against the recorded tasks with the host's replay checks
(:mod:`devhost.orchestration.nondeterminism`, DTFx's texts), so a change that would fail an
instance in flight after a deploy is found before it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devhost.app import invoke
from devhost.app.loader import AppIndex, find_function
from devhost.orchestration.actions import HTTP_ACTIVITY, ActionType, flatten, takes_sequence_number
from devhost.orchestration.nondeterminism import (
    FAMILY,
    NonDeterminismError,
    check_action,
    check_missing,
)
from devhost.orchestration.sdk_errors import sdk_failure
from devhost.replay.history import (
    HistoryFormatError,
    RecordedHistory,
    ScheduledTask,
    parse_history,
    stored_history,
)

IN_FLIGHT = ["Pending", "Running", "Suspended"]
"""Runtime statuses of the instances a deploy would meet mid-flight."""


@dataclass(frozen=True)
class ReplayResult:
    """What replaying one instance's history against the current code found.

    ``position`` is the index in ``historyEvents`` of the first event the new code decides
    otherwise (None when clean); ``message`` is DTFx's non-determinism text or the failure.
    """

    source: str
    instance_id: str
    name: str
    clean: bool
    position: int | None = None
    event: str | None = None
    message: str = ""
    where: str = "historyEvents[{}]"

    def line(self) -> str:
        """Return the one-line report of this instance."""
        who = f"{self.source}: {self.name} '{self.instance_id}'"
        if self.clean:
            return f"{who}: same decisions"
        where = (f" at {self.where.format(self.position)} ({self.event})"
                 if self.position is not None else "")
        return f"{who}: diverges{where}: {self.message}"


def context_json(history: RecordedHistory) -> str:
    """Build the orchestration trigger's context JSON for a full replay of ``history``."""
    return json.dumps({"history": history.events, "input": history.input,
                       "instanceId": history.instance_id, "isReplaying": True,
                       "parentInstanceId": None, "upperSchemaVersion": 1})


def replay_history(index: AppIndex, history: RecordedHistory, source: str = "") -> ReplayResult:
    """Replay ``history`` through the app's orchestrator and compare its decisions.

    A history whose tasks of one instant could be numbered otherwise (:attr:`ties`) and
    that diverges is numbered again in the order the code decided, and replayed once more.
    """
    found = ReplayResult(source, history.instance_id, history.name, True,
                         where=history.where)
    fdef = find_function(index.orchestrators, history.name)
    if fdef is None:
        return _diverged(found, None, f"the app has no orchestrator '{history.name}'")
    numbered, error = _decisions(fdef.func, history)
    result = _compare(found, history, numbered, error)
    if result.clean or not history.ties or history.doc is None:
        return result
    again = parse_history(history.doc, [(FAMILY.get(ActionType(a["actionType"])),
                                         a.get("functionName")) for a in numbered])
    numbered, error = _decisions(fdef.func, again)
    return _compare(found, again, numbered, error)


def _decisions(handler: Any, history: RecordedHistory) -> tuple[list[dict[str, Any]],
                                                                 str | None]:
    """Return the numbered actions the code answers to ``history``, and its failure."""
    try:
        state = json.loads(invoke.call_guarded(handler, context_json(history)))
        error = None
    except Exception as exc:  # noqa: BLE001 - the SDK reports an orchestrator's failure so
        failure = sdk_failure(exc)
        state, error = failure.state, failure.message
    return [_named(a) for a in flatten(state) if takes_sequence_number(a)], error


def _compare(found: ReplayResult, history: RecordedHistory, numbered: list[dict[str, Any]],
             error: str | None) -> ReplayResult:
    """Check the code's decisions against the recorded tasks (DTFx's replay checks)."""
    tasks = history.scheduled
    i = 0
    for action in numbered:
        if i == len(tasks):
            break  # new decisions past the history: what the instance does next
        try:
            check_action(tasks[i].seq, (tasks[i].kind, tasks[i].name), action, dict)
        except NonDeterminismError as exc:
            return _diverged(found, tasks[i], str(exc))
        i = _past_retries(tasks, i) if ActionType(action["actionType"]) in RETRYING else i + 1
    if i < len(tasks):
        try:
            check_missing(tasks[i].seq, (tasks[i].kind, tasks[i].name), dict)
        except NonDeterminismError as exc:
            return _diverged(found, tasks[i], str(exc))
    if error is not None and not history.failed:
        return _diverged(found, None, f"the orchestrator fails on replay: {error}")
    return found


RETRYING = (ActionType.CallActivityWithRetry, ActionType.CallSubOrchestratorWithRetry)
"""Actions the SDK answers once for every attempt DTFx's retry interceptor schedules."""


def _past_retries(tasks: list[ScheduledTask], i: int) -> int:
    """Return the index of the first task after the attempts of the retried call at ``i``.

    A failed attempt is followed by its retry timer (a task of its own, even after the last
    attempt) and then, unless that was the last, by the next attempt of the same name
    (:mod:`devhost.orchestration.episode`, as DTFx's ``RetryInterceptor``).
    """
    while (tasks[i].failed and i + 1 < len(tasks)
           and tasks[i + 1].kind == ActionType.CreateTimer):
        i += 1  # the retry timer
        if i + 1 < len(tasks) and tasks[i + 1].name == tasks[i - 1].name \
                and tasks[i + 1].kind == tasks[i - 1].kind:
            i += 1  # the next attempt
        else:
            break
    return i + 1


def _named(action: dict[str, Any]) -> dict[str, Any]:
    """Name a ``call_http`` action as its scheduling event names it (the built-in activity)."""
    if ActionType(action["actionType"]) == ActionType.CallHttp:
        return dict(action, functionName=HTTP_ACTIVITY)
    return action


def _diverged(found: ReplayResult, task: ScheduledTask | None, message: str) -> ReplayResult:
    return ReplayResult(found.source, found.instance_id, found.name, False,
                        None if task is None else task.position,
                        None if task is None else f"{task.event_type} {task.name or ''}".strip(),
                        message, found.where)


def histories_in(path: Path) -> Iterator[tuple[str, RecordedHistory]]:
    """Yield (file name, history) of a history file or of every ``*.json`` in a folder.

    Raises
    ------
    HistoryFormatError
        Naming the file, if a file is missing, not JSON, or not a history.
    """
    if not path.exists():
        raise HistoryFormatError(f"{path}: no such file or folder")
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise HistoryFormatError(f"{path}: the folder holds no .json history file")
    for file in files:
        try:
            doc = json.loads(file.read_text(encoding="utf-8-sig"))
            yield str(file), parse_history(doc)
        except (ValueError, UnicodeDecodeError) as exc:
            what = str(exc) if isinstance(exc, HistoryFormatError) else f"not JSON ({exc})"
            raise HistoryFormatError(f"{file}: {what}") from None


def histories_in_taskhub(data_dir: Path) -> Iterator[tuple[str, RecordedHistory]]:
    """Yield (task hub path, history) of every in-flight instance of a local task hub.

    Raises
    ------
    HistoryFormatError
        If ``data_dir`` holds no task hub.
    """
    from clocks import SystemClock
    from devhost.taskhub.store import TaskHub

    path = data_dir / "taskhub.sqlite"
    if not path.is_file():
        raise HistoryFormatError(f"{data_dir}: no task hub (taskhub.sqlite) in this folder")
    hub = TaskHub(path, SystemClock())
    token: str | None = None
    while True:
        page, token = hub.query(statuses=IN_FLIGHT, top=1000, continuation=token)
        for inst in page:
            events = hub.get_history(inst.instance_id)
            if events:
                yield str(path), stored_history(inst.instance_id, inst.name, events)
        if token is None:
            return


def run_replay(app_dir: Path, histories: Path | None = None,
               data_dir: Path | None = None) -> list[ReplayResult]:
    """Load the app and replay the histories of a file or folder, or of a task hub.

    Raises
    ------
    HistoryFormatError
        For bad input, with one line: no app, an app that fails to load, a history file
        that is not a history, no task hub.
    """
    from devhost.app.load_errors import AppLoadError
    from devhost.app.loader import load_app

    app_dir = Path(app_dir)
    if not (app_dir / "host.json").is_file():
        raise HistoryFormatError(f"{app_dir}: no app here (no host.json); point --app-dir at "
                                 "the app's folder")
    try:
        _, index = load_app(app_dir)
    except AppLoadError as exc:
        raise HistoryFormatError(f"the app fails to load: {exc}") from None
    found = (list(histories_in(histories)) if histories is not None
             else list(histories_in_taskhub(data_dir or Path(".data"))))
    return [replay_history(index, history, source) for source, history in found]
