"""The shim model alone: which actions are invoked and what holds a returned orchestrator.

Action shapes are the SDK's (replay schema V2); the rules are ``ProcessAsyncActionsV2`` and
``TaskOrchestrationExecutor.ExecuteCore`` (devhost/orchestration/shim.py cites the files).
"""

from devhost.orchestration.actions import ActionType
from devhost.orchestration.shim import record_events, take_actions
from devhost.taskhub.events import EventType
from devhost.taskhub.store import empty_replay_state


def activity(name):
    return {"actionType": ActionType.CallActivity, "functionName": name}


def timer(cancelled=False):
    return {"actionType": ActionType.CreateTimer, "fireAt": "2030-01-01T01:00:00Z",
            "isCanceled": cancelled}


def wait(name):
    return {"actionType": ActionType.WaitForExternalEvent, "externalEventName": name}


def compound(kind, *children):
    return {"actionType": kind, "compoundActions": list(children)}


def state_with(known, events=()):
    state = empty_replay_state()
    state["action_ids"] = [[seq, kind, name] for seq, kind, name in known]
    record_events(state, events)
    return state


def test_actions_after_an_open_one_are_not_invoked():
    state = state_with([(0, ActionType.CallActivity, "a")])
    outcome = take_actions(state, {"actions": [[activity("a"), activity("b")]]})
    assert [a["functionName"] for a in outcome.invoked] == ["a"]
    assert (outcome.settled, outcome.waiting_for) == (False, "activity 'a' (task 0)")


def test_when_all_ends_when_every_child_ended_failed_or_not():
    known = [(0, ActionType.CallActivity, "a"), (1, ActionType.CallActivity, "b")]
    failed = {"EventType": EventType.TaskFailed, "TaskScheduledId": 0}
    pending = take_actions(state_with(known, [failed]),
                           {"actions": [[compound(ActionType.WhenAll, activity("a"),
                                                  activity("b")), activity("c")]]})
    assert [a["functionName"] for a in pending.invoked] == ["a", "b"]
    assert pending.holds == "activity 'b' (task 1)"
    done = {"EventType": EventType.TaskCompleted, "TaskScheduledId": 1}
    ended = take_actions(state_with(known, [failed, done]),
                         {"actions": [[compound(ActionType.WhenAll, activity("a"),
                                                activity("b")), activity("c")]]})
    assert [a["functionName"] for a in ended.invoked] == ["a", "b", "c"]


def test_a_when_any_loser_is_open_unless_it_is_a_cancelled_timer_or_a_wait():
    known = [(0, ActionType.CallActivity, "a"), (1, ActionType.CreateTimer, None)]
    won = {"EventType": EventType.TaskCompleted, "TaskScheduledId": 0}
    for loser, holds in ((timer(), "the timer firing at 2030-01-01T01:00:00Z (task 1)"),
                         (timer(cancelled=True), None)):
        outcome = take_actions(state_with(known, [won]), {"actions": [[
            compound(ActionType.WhenAny, activity("a"), loser)]]})
        assert outcome.settled and outcome.holds == holds
    waits = take_actions(state_with([(0, ActionType.CallActivity, "a")], [won]),
                         {"actions": [[compound(ActionType.WhenAny, activity("a"),
                                                wait("go"))]]})
    assert waits.holds is None  # the extension's own task: not in DTFx's openTasks


def test_waits_take_raised_events_in_order_ignoring_case():
    raised = [{"EventType": EventType.EventRaised, "Name": "Approval"}]
    outcome = take_actions(state_with([], raised),
                           {"actions": [[wait("approval"), wait("approval")]]})
    assert len(outcome.invoked) == 2
    assert outcome.waiting_for == "external event 'approval'"
