"""The order's lifecycle: the transition table, its changes and its ids (S2-S9, V2, D2)."""

from datetime import timedelta
from itertools import product

import pytest

from orders.lifecycle import ids
from orders.lifecycle.changes import (
    claim_attempt,
    claim_compensation,
    complete,
    fail_without_undo,
    finish_compensation,
    give_up_compensation,
    hand_over,
    hold_back_attempt,
    resubmit,
    retry_attempt,
    retry_compensation,
    status_sent,
    status_unsent,
)
from orders.lifecycle.transitions import (
    TRANSITIONS,
    Actor,
    IllegalTransitionError,
    apply,
)
from orders.models import ProcessState, StateRecord
from tests.support.records import record_in

P = ProcessState

EXPECTED = {
    (P.PENDING, P.PROCESSING),
    (P.PROCESSING, P.PROCESSING), (P.PROCESSING, P.PROCESSED), (P.PROCESSING, P.PENDING),
    (P.PROCESSING, P.COMPENSATING), (P.PROCESSING, P.ERROR),
    (P.COMPENSATING, P.COMPENSATING), (P.COMPENSATING, P.COMPENSATED),
    (P.COMPENSATING, P.COMPENSATION_FAILED),
    (P.ERROR, P.PENDING),
    # Noting that the client was told the final status, or is still to be (S8).
    (P.PROCESSED, P.PROCESSED), (P.ERROR, P.ERROR), (P.COMPENSATED, P.COMPENSATED),
    (P.COMPENSATION_FAILED, P.COMPENSATION_FAILED),
}
"""Every (from, to) pair of ProcessState an order may take, and no other (S2, S9)."""


def valid(record: StateRecord) -> StateRecord:
    return StateRecord.model_validate(record.model_dump(mode="json"))


@pytest.mark.parametrize(("source", "target"), list(product(ProcessState, ProcessState)))
def test_every_pair_of_states_is_allowed_only_if_the_table_says_so(source, target):
    allowed = any(source in t.source and (t.target or source) is target
                  for t in TRANSITIONS.values())
    assert allowed is ((source, target) in EXPECTED)


@pytest.mark.parametrize("state", list(ProcessState))
@pytest.mark.parametrize("name", sorted(TRANSITIONS))
def test_apply_refuses_every_transition_from_a_state_it_does_not_start_from(stores, clock,
                                                                           name, state):
    record = record_in(stores.states, clock).model_copy(update={"process_state": state})
    transition = TRANSITIONS[name]
    actor = sorted(transition.actors)[0]
    if state in transition.source:
        changed = apply(name, record, actor)
        assert changed.process_state is (transition.target or state)
    else:
        with pytest.raises(IllegalTransitionError, match=name):
            apply(name, record, actor)


@pytest.mark.parametrize("name", sorted(TRANSITIONS))
def test_apply_refuses_an_actor_the_table_does_not_name(stores, clock, name):
    transition = TRANSITIONS[name]
    record = record_in(stores.states, clock).model_copy(
        update={"process_state": sorted(transition.source)[0]})
    for actor in set(Actor) - transition.actors:
        with pytest.raises(IllegalTransitionError, match="may not"):
            apply(name, record, actor)


def test_apply_never_lets_a_caller_set_the_state_itself(stores, clock):
    record = record_in(stores.states, clock)
    with pytest.raises(IllegalTransitionError, match="set by the transition"):
        apply("retry_attempt", record, Actor.SUPERVISOR, process_state=P.PROCESSED)


def test_an_order_from_claim_to_processed(stores, clock):
    pending = record_in(stores.states, clock, state=P.PENDING)
    claimed = valid(claim_attempt(pending, clock.now() + timedelta(seconds=60), version=2))
    assert (claimed.process_state, claimed.locked_by, claimed.attempt) == (
        P.PROCESSING, "ORD-1:1", 1)
    assert claimed.workflow_version == 2
    tell_by = clock.now() + timedelta(seconds=60)
    done = valid(complete(claimed, tell_by))
    # The final status is pending until it was sent: CompleteBy is its deadline (S8).
    assert done.process_state is P.PROCESSED and done.complete_by == tell_by
    told = valid(status_sent(done, Actor.ORDER_WORKFLOW))
    assert (told.process_state, told.locked_by, told.complete_by) == (P.PROCESSED, "ORD-1:1",
                                                                       None)
    later = valid(status_unsent(done, tell_by + timedelta(seconds=60)))
    assert later.complete_by == tell_by + timedelta(seconds=60)
    with pytest.raises(IllegalTransitionError):
        complete(done, tell_by)
    with pytest.raises(IllegalTransitionError):
        status_sent(claimed, Actor.ORDER_WORKFLOW)


def test_later_attempts_keep_the_version_the_first_one_fixed(stores, clock):
    first = claim_attempt(record_in(stores.states, clock, state=P.PENDING), clock.now(), 1)
    retried = retry_attempt(first, 1, clock.now() + timedelta(seconds=2))
    assert (retried.process_state, retried.locked_by, retried.failure_count) == (
        P.PENDING, None, 1)
    second = claim_attempt(retried, clock.now(), version=2)
    assert (second.locked_by, second.workflow_version) == ("ORD-1:2", 1)


def test_a_hold_back_counts_no_failure(stores, clock):
    running = record_in(stores.states, clock)
    held = valid(hold_back_attempt(running, 3, clock.now() + timedelta(seconds=9)))
    assert (held.process_state, held.failure_count, held.circuit_holds) == (P.PENDING, 0, 3)


def test_hand_over_then_claim_compensation(stores, clock):
    record = record_in(stores.states, clock)
    handed = valid(hand_over(record, "ship failed permanently: x" * 100, Actor.SUPERVISOR))
    assert handed.process_state is P.COMPENSATING
    assert (handed.locked_by, handed.complete_by, handed.not_before) == (None, None, None)
    assert len(handed.failure_reason) == 1000 and handed.failure_reason.endswith("...")
    deadline = clock.now() + timedelta(seconds=60)
    claimed = valid(claim_compensation(handed, deadline))
    assert claimed.locked_by == "ORD-1:comp:1" and claimed.compensation_attempt == 1
    assert claimed.complete_by == deadline
    again = claim_compensation(retry_compensation(claimed, 1, clock.now()), deadline)
    assert again.locked_by == "ORD-1:comp:2"


def test_retry_give_up_and_finish_a_compensation(stores, clock):
    running = claim_compensation(hand_over(record_in(stores.states, clock), "x",
                                           Actor.ORDER_WORKFLOW), clock.now())
    later = valid(retry_compensation(running, 1, clock.now() + timedelta(seconds=2)))
    assert (later.locked_by, later.compensation_failures) == (None, 1)
    assert later.not_before == clock.now() + timedelta(seconds=2) and later.complete_by is None
    tell_by = clock.now() + timedelta(seconds=60)
    failed = valid(give_up_compensation(running, 2, tell_by))
    assert failed.process_state is P.COMPENSATION_FAILED and failed.complete_by == tell_by
    assert failed.locked_by == "ORD-1:comp:1" and failed.compensation_failures == 2
    done = finish_compensation(running, P.COMPENSATED, tell_by)
    assert (done.process_state, done.complete_by) == (P.COMPENSATED, tell_by)
    with pytest.raises(ValueError, match="Compensated or CompensationFailed"):
        finish_compensation(running, P.ERROR, tell_by)


def test_resubmit_only_from_error(stores, clock):
    failed = fail_without_undo(record_in(stores.states, clock), "declined", Actor.ORDER_WORKFLOW,
                               clock.now())
    again = valid(resubmit(failed.model_copy(update={"failure_count": 3})))
    assert (again.process_state, again.failure_count, again.locked_by) == (P.PENDING, 0, None)
    assert again.complete_by is None
    with pytest.raises(IllegalTransitionError):
        resubmit(again)


def test_instance_ids_stay_valid_for_the_longest_order_id():
    longest = "A" * 64
    assert ids.attempt_instance_id(longest, 99_999) == f"{longest}:99999"
    assert ids.compensation_instance_id(longest, 1) == f"{longest}:comp:1"
    assert len(ids.compensation_instance_id(longest, 99_999)) <= 100
    for build in (ids.attempt_instance_id, ids.compensation_instance_id):
        with pytest.raises(ValueError, match="at least 1"):
            build("ORD-1", 0)


def test_one_order_s_ids():
    request = ids.request_message_id("ORD-1:2", "charge")
    assert request == "ORD-1:2:charge"
    assert ids.reply_message_id(request) == "ORD-1:2:charge:reply"
    assert ids.reply_event_name("charge") == "charge-reply"
    assert ids.idempotency_key("ORD-1", "charge") == "ORD-1:charge"
    assert ids.status_message_id("ORD-1", "OrderCompleted", ":r1") == "ORD-1:OrderCompleted:r1"
    with pytest.raises(ValueError, match="longer than 255"):
        ids.idempotency_key("A" * 250, "cancel_shipment")


def test_an_order_key_scopes_the_order_id_to_its_client():
    assert ids.order_key("acme", "ORD-1") == "acme~ORD-1"
    assert ids.order_key("acme", "ORD-1") != ids.order_key("globex", "ORD-1")
    assert ids.split_order_key("acme~ORD-1") == ("acme", "ORD-1")
    assert ids.split_order_key("ORD-1") == (None, "ORD-1")  # a legacy key
    assert ids.client_order_id("acme~ORD-1") == ids.client_order_id("ORD-1") == "ORD-1"
    assert ids.idempotency_key("acme~ORD-1", "charge") == "acme~ORD-1:charge"
    assert ids.attempt_instance_id("acme~ORD-1", 2) == "acme~ORD-1:2"


@pytest.mark.parametrize(("client_id", "order_id", "rule"), [
    ("Acme", "ORD-1", "client_id: must be 1 to 20 lower-case letters"),
    ("a" * 21, "ORD-1", "client_id: must be 1 to 20"),
    ("acme-", "ORD-1", "client_id: .*ending with a letter or digit"),
    ("", "ORD-1", "client_id"),
    ("acme", "ORD~1", "order_id: must be 1 to 64 characters"),
    ("acme", "O" * 65, "order_id: must be 1 to 64 characters"),
])
def test_an_order_key_refuses_bad_parts_naming_them(client_id, order_id, rule):
    with pytest.raises(ValueError, match=rule):
        ids.order_key(client_id, order_id)


def test_every_id_fits_at_the_longest_client_id_and_order_id():
    from orders.models.messages import AgentReply, AgentRequest

    key = ids.order_key("c" * 20, "O" * 64)
    assert len(key) == 85
    attempt = ids.attempt_instance_id(key, 999_999_999)
    compensation = ids.compensation_instance_id(key, 999_999_999)
    assert len(compensation) == 100 and len(attempt) < 100  # D2
    request = ids.request_message_id(compensation, "cancel_shipment")
    fields = AgentRequest.model_fields
    assert len(request) <= fields["message_id"].metadata[1].max_length == 128
    assert len(ids.reply_message_id(request)) <= \
        AgentReply.model_fields["message_id"].metadata[1].max_length
    assert len(ids.idempotency_key(key, "cancel_shipment")) <= ids.MAX_KEY_LENGTH
    status = ids.status_message_id(ids.client_order_id(key), "CompensationFailed",
                                   f":{compensation}")
    assert len(status) <= 128 and status.startswith("O" * 64 + ":CompensationFailed:")
    assert status == ids.status_message_id("O" * 64, "CompensationFailed", f":{compensation}")
    with pytest.raises(ValueError, match="1 to 100"):
        ids.compensation_instance_id(key, 1_000_000_000)


@pytest.mark.parametrize(("instance_id", "key"), [
    ("acme~ORD-1:2", "acme~ORD-1"), ("acme~ORD-1:comp:1", "acme~ORD-1"),
    ("ORD-1:1", "ORD-1"), ("a:b:3", "a:b"),
    ("acme~ORD-1", None), ("acme~ORD-1:x", None), (":1", None), (":comp:1", None),
])
def test_an_instance_id_names_its_order(instance_id, key):
    assert ids.order_key_of_instance(instance_id) == key
    parsed = ids.split_instance_id(instance_id)
    assert parsed == (None if key is None else (key, int(instance_id.rsplit(":", 1)[1])))
    if key is not None and ":comp:" not in instance_id:
        assert ids.attempt_instance_id(key, int(instance_id.rsplit(":", 1)[1])) == instance_id
