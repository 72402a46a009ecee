import json
import re
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from store_builders import make_order

from orders.models import (
    IN_FLIGHT_STATES,
    STATE_SCHEMA_VERSION,
    SUPERVISED_STATES,
    TOTAL_TOLERANCE_PER_LINE,
    Order,
    OrderLine,
    ProcessState,
    StateRecord,
    check_instance_id,
    format_utc,
)

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def test_total_price_follows_tpch_o_totalprice():
    order = make_order()
    first, second = order.lines
    assert first.extended_price == Decimal("20.00")
    assert first.charge == Decimal("18.90")  # 20.00 * 1.05 * 0.90
    assert second.charge == Decimal("5.00")
    assert order.computed_total == Decimal("23.90")


def test_total_price_within_tolerance_per_line_is_accepted():
    assert TOTAL_TOLERANCE_PER_LINE == Decimal("0.021")
    # two lines: up to 0.042 difference allowed (TPC-H truncates cents twice per line)
    assert make_order(total_price=Decimal("23.94")).total_price == Decimal("23.94")
    assert make_order(total_price=Decimal("23.86")).total_price == Decimal("23.86")


def test_total_price_off_by_more_than_tolerance_is_rejected_without_quoting_amounts():
    with pytest.raises(ValidationError) as info:
        make_order(total_price=Decimal("23.95"))
    (error,) = info.value.errors()
    reason = error["msg"]  # what is stored, logged and alerted on: amounts are Restricted
    assert "totalPrice: does not match the lines" in reason
    assert "0.02" in reason  # the allowed difference, a rule, not an amount
    assert "23.95" not in reason and "23.9000" not in reason


def test_rounded_line_charge_is_accepted():
    # 3 * 3.33 * 1.07 * 0.95 = 10.154835 exactly in Decimal -> the client charges 10.15
    line = OrderLine(
        sku="X", quantity=3, unit_price=Decimal("3.33"), tax=Decimal("0.07"),
        discount=Decimal("0.05"),
    )
    order = make_order(lines=(line,), total_price=Decimal("10.15"))
    assert order.computed_total == Decimal("10.154835")


@pytest.mark.parametrize("order_key", ["ORD/1", "ORD:1", "ORD#1", "@ORD", "ORD 1", "", "A" * 65])
def test_order_id_outside_allowed_characters_is_rejected(order_key):
    with pytest.raises(ValidationError) as info:
        make_order(order_key)
    assert "order_key" in str(info.value)
    assert re.search(r"[ (]D2\)", str(info.value))  # cites the rule: ", D2)" or " (D2)"


def test_longest_order_id_gives_valid_instance_id():
    order = make_order("a.B_c-9" + "Z" * 57)
    assert len(order.order_key) == 64
    assert check_instance_id(f"{order.order_key}:12345") == f"{order.order_key}:12345"


@pytest.mark.parametrize("bad", ["", "@x", "a/b", "a\\b", "a#b", "a?b", "a\x01b", "x" * 101])
def test_instance_id_rules_of_d2(bad):
    with pytest.raises(ValueError):
        check_instance_id(bad)


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("quantity", 0, "greater than 0"),
        ("quantity", "3", "valid integer"),
        ("quantity", True, "valid integer"),
        ("unit_price", Decimal("-1"), "greater than or equal to 0"),
        ("unit_price", Decimal("0.00001"), "decimal places"),
        ("unit_price", Decimal("NaN"), "finite"),
        ("discount", Decimal("1.5"), "less than or equal to 1"),
        ("tax", Decimal("-0.01"), "greater than or equal to 0"),
        ("sku", "bad sku", "A-Z"),
    ],
)
def test_line_rules_name_the_field(field, value, fragment):
    data = {"sku": "S", "quantity": 1, "unit_price": Decimal("1"), field: value}
    with pytest.raises(ValidationError) as info:
        OrderLine(**data)
    assert field in str(info.value)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"currency": "eur"}, "currency"),
        ({"customer_id": "  "}, "customer_id"),
        ({"lines": ()}, "lines"),
        ({"created_at": datetime(2030, 1, 1)}, "created_at"),
    ],
)
def test_order_rules_name_the_field(changes, field):
    with pytest.raises(ValidationError) as info:
        make_order(**changes)
    assert field in str(info.value)


def test_json_uses_camel_case_and_money_as_strings():
    order = make_order()
    document = json.loads(order.model_dump_json())
    assert set(document) == {
        "orderId", "customerId", "currency", "lines", "totalPrice", "createdAt", "schemaVersion"
    }
    assert document["totalPrice"] == "23.90"
    assert document["lines"][0]["unitPrice"] == "10.00"
    assert document["createdAt"] == "2030-01-01T00:00:00.000000Z"
    assert Order.model_validate_json(order.model_dump_json()) == order


def test_message_with_json_numbers_is_parsed_exactly():
    message = (
        '{"orderId": "ORD-9", "customerId": "C", "currency": "USD", "totalPrice": 0.3,'
        ' "createdAt": "2030-01-01T01:00:00+01:00",'
        ' "lines": [{"sku": "A", "quantity": 3, "unitPrice": 0.1}]}'
    )
    order = Order.model_validate_json(message)
    assert order.total_price == Decimal("0.3")
    assert order.lines[0].unit_price == Decimal("0.1")
    assert order.created_at == NOW
    assert order.created_at.tzinfo == UTC


def test_same_data_compares_amounts_by_value_and_times_by_instant():
    a = make_order()
    b = make_order(
        total_price=Decimal("23.9"),
        created_at=datetime(2030, 1, 1, 2, tzinfo=timezone(timedelta(hours=2))),
    )
    assert a.same_data(b)
    assert not a.same_data(make_order(customer_id="CUST-8"))


def test_models_are_immutable():
    with pytest.raises(ValidationError):
        make_order().order_key = "OTHER"  # type: ignore[misc]


def test_process_state_includes_compensation_states():
    assert {s.value for s in ProcessState} == {
        "Pending", "Processing", "Processed", "Error",
        "Compensating", "Compensated", "CompensationFailed",
    }
    assert SUPERVISED_STATES == (ProcessState.PROCESSING, ProcessState.COMPENSATING)
    assert ProcessState.PENDING in IN_FLIGHT_STATES


def test_new_state_record_follows_s2_first_write():
    record = StateRecord.new("ORD-1", "client-a-replies", NOW)
    assert record.process_state is ProcessState.PENDING
    assert (record.locked_by, record.complete_by, record.not_before) == (None, None, None)
    assert (record.failure_count, record.attempt) == (0, 0)
    assert (record.workflow_version, record.schema_version) == (1, STATE_SCHEMA_VERSION)
    assert (record.circuit_refused_by, record.circuit_holds) == (None, 0)
    assert (record.compensation_attempt, record.compensation_failures) == (0, 0)
    assert record.failure_reason is None
    assert record.etag is None
    assert record.model_dump(mode="json")["orderId"] == "ORD-1"
    assert StateRecord.model_validate(record.model_dump(mode="json")) == record


def test_pending_record_must_not_be_locked():
    with pytest.raises(ValidationError, match="lockedBy: must be null while processState"):
        StateRecord(
            order_key="O", reply_to="q", locked_by="O:1", created_at=NOW, updated_at=NOW
        )


def test_processing_record_must_name_its_instance():
    with pytest.raises(ValidationError, match="lockedBy: must name the owning"):
        StateRecord(
            order_key="O", reply_to="q", process_state=ProcessState.PROCESSING,
            created_at=NOW, updated_at=NOW,
        )


def test_compensating_record_may_wait_unlocked_for_its_next_attempt():
    waiting = StateRecord(order_key="O", reply_to="q", process_state=ProcessState.COMPENSATING,
                          created_at=NOW, updated_at=NOW)
    running = waiting.model_copy(update={"locked_by": "O:comp:1"})
    assert StateRecord.model_validate(running.model_dump(mode="json")) == running


SINCE_4 = ("traceParent", "attemptTrace")
"""Fields schema 5 added (the order's trace context, X8)."""


def legacy_record(version, added_since, **update):
    """A StateRecord document as schema ``version`` wrote it: without the fields added since."""
    document = StateRecord.new("ORD-1", "replies-acme", NOW).model_copy(
        update=update).model_dump(mode="json")
    for added in added_since:
        del document[added]
    document["schemaVersion"] = version
    return StateRecord.model_validate(document)


def test_state_record_version_1_is_read_as_the_current_version():
    record = legacy_record(1, ("compensationAttempt", "compensationFailures", "failureReason",
                               "circuitRefusedBy", "circuitHolds", "clientId",
                               "clientOrderId", *SINCE_4))
    assert record.schema_version == STATE_SCHEMA_VERSION == 5
    assert (record.trace_parent, record.attempt_trace) == (None, None)
    assert (record.compensation_attempt, record.compensation_failures) == (0, 0)
    assert record.failure_reason is None
    assert (record.circuit_refused_by, record.circuit_holds) == (None, 0)


def test_state_record_version_2_is_read_with_no_circuit_refusal():
    record = legacy_record(2, ("circuitRefusedBy", "circuitHolds", *SINCE_4),
                           process_state=ProcessState.PROCESSING, locked_by="ORD-1:1",
                           failure_count=1)
    assert record.schema_version == STATE_SCHEMA_VERSION
    assert (record.circuit_refused_by, record.circuit_holds, record.failure_count) == \
        (None, 0, 1)


def test_state_record_version_3_is_a_legacy_record_keyed_on_its_order_id():
    record = legacy_record(3, ("clientId", "clientOrderId", *SINCE_4),
                           process_state=ProcessState.PROCESSING, locked_by="ORD-1:2",
                           attempt=2)
    assert record.schema_version == STATE_SCHEMA_VERSION
    assert (record.order_key, record.client_id, record.client_order_id) == ("ORD-1", None, None)
    assert record.submitted_order_id == "ORD-1" and record.locked_by == "ORD-1:2"


def test_state_record_version_4_is_read_without_a_trace_context():
    record = legacy_record(4, SINCE_4, process_state=ProcessState.PROCESSING,
                           locked_by="acme~ORD-1:1", client_id="acme", client_order_id="ORD-1",
                           order_key="acme~ORD-1")
    assert record.schema_version == STATE_SCHEMA_VERSION
    assert (record.trace_parent, record.attempt_trace) == (None, None)
    assert record.locked_by == "acme~ORD-1:1"


def test_a_client_record_is_keyed_on_client_and_order_id():
    record = StateRecord(order_key="acme~ORD-1", client_id="acme", client_order_id="ORD-1",
                         reply_to="replies-acme", created_at=NOW, updated_at=NOW)
    assert StateRecord.model_validate(record.model_dump(mode="json")) == record
    assert record.model_dump(mode="json")["clientOrderId"] == "ORD-1"
    assert record.submitted_order_id == "ORD-1"


@pytest.mark.parametrize(("order_key", "client_id", "client_order_id", "rule"), [
    ("globex~ORD-1", "acme", "ORD-1", "orderId: must be the order key"),
    ("acme~ORD-2", "acme", "ORD-1", "orderId: must be the order key"),
    ("acme~ORD-1", None, None, "clientId: required with the order key"),
    ("Acme~ORD-1", None, None, "client part of the order key"),
    ("acme~ORD~1", None, None, "client part of the order key"),
])
def test_a_key_that_does_not_match_its_client_is_refused(order_key, client_id, client_order_id,
                                                         rule):
    with pytest.raises(ValidationError, match=rule):
        StateRecord(order_key=order_key, client_id=client_id, client_order_id=client_order_id,
                    reply_to="replies-acme", created_at=NOW, updated_at=NOW)


@pytest.mark.parametrize("reply_to", ["", "-q", "q-", "q q", "x" * 261])
def test_reply_to_must_be_a_queue_name(reply_to):
    with pytest.raises(ValidationError, match="reply_to"):
        StateRecord.new("O", reply_to, NOW)


def test_format_utc_is_fixed_width_and_sorts_like_time():
    early = datetime(2030, 1, 1, tzinfo=UTC)
    late = early + timedelta(microseconds=1)
    other_zone = datetime(2030, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))
    assert format_utc(early) == "2030-01-01T00:00:00.000000Z"
    assert format_utc(other_zone) == format_utc(early)
    assert len(format_utc(late)) == len(format_utc(early)) == 27
    assert format_utc(early) < format_utc(late)
    with pytest.raises(ValueError, match="timezone-aware"):
        format_utc(datetime(2030, 1, 1))


@given(st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-9, minutes=-30)),
                                               timezone(timedelta(hours=14))])))
def test_format_utc_writes_what_strftime_writes_for_every_year(when):
    try:
        expected = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except OverflowError:
        with pytest.raises(ValueError, match="between years 1 and 9999"):
            format_utc(when)
        return
    assert format_utc(when) == expected


def test_zero_total_order_is_refused_naming_total_price():
    with pytest.raises(ValidationError) as info:
        make_order(total_price=Decimal("0"))
    assert "total_price" in str(info.value) or "totalPrice" in str(info.value)
    assert "greater than 0" in str(info.value)
