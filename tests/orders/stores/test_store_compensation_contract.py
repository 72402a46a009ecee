"""Compensation log contract, run against every backend (see conftest.py)."""

from datetime import timedelta

import pytest

from orders.models import CompensationEntry
from orders.stores import ConflictError


def entry(order_key, details, now, instance_id=None):
    return CompensationEntry.new(order_key, details, instance_id=instance_id or f"{order_key}:1",
                                 workflow_version=1, now=now)


RESERVE = {"step": "reserve_inventory", "reservationId": "RES-1",
           "lines": [{"sku": "SKU-A", "quantity": 2}]}
CHARGE = {"step": "charge", "paymentId": "pay_1", "amount": "23.90", "currency": "EUR"}
SHIP = {"step": "ship", "shipmentId": "shp_1"}
REFUND = {"step": "refund", "outcome": "Undone", "refundId": "re_1", "amount": "23.90",
          "currency": "EUR"}


def test_entries_get_seq_in_order_of_writing(stores, clock):
    log = stores.compensation
    seqs = []
    for details in (RESERVE, CHARGE, SHIP):
        clock.advance(timedelta(seconds=1))
        seqs.append(log.record(entry("ORD-1", details, clock.now())).record.seq)
    assert seqs == [1, 2, 3]
    assert [(e.seq, e.step.value) for e in log.entries("ORD-1")] == [
        (1, "reserve_inventory"), (2, "charge"), (3, "ship")]


def test_writing_the_same_step_again_stores_it_once(stores, clock):
    log = stores.compensation
    first = log.record(entry("ORD-2", CHARGE, clock.now()))
    clock.advance(timedelta(minutes=5))
    again = log.record(entry("ORD-2", CHARGE, clock.now(), instance_id="ORD-2:2"))
    assert (first.created, again.created) == (True, False)
    assert again.record == first.record
    assert len(log.entries("ORD-2")) == 1


def test_same_step_with_other_details_conflicts_and_keeps_the_original(stores, clock):
    log = stores.compensation
    log.record(entry("ORD-3", CHARGE, clock.now()))
    other = {**CHARGE, "paymentId": "pay_other"}
    with pytest.raises(ConflictError, match="charge"):
        log.record(entry("ORD-3", other, clock.now()))
    assert [e.details.payment_id for e in log.entries("ORD-3")] == ["pay_1"]


def test_orders_have_separate_logs(stores, clock):
    log = stores.compensation
    log.record(entry("ORD-4", RESERVE, clock.now()))
    log.record(entry("ORD-5", CHARGE, clock.now()))
    assert [e.step.value for e in log.entries("ORD-4")] == ["reserve_inventory"]
    assert log.entries("ORD-5")[0].seq == 1
    assert log.entries("NO-SUCH-ORDER") == []


def test_entries_round_trip_with_classification_and_retention(stores, clock):
    stored = stores.compensation.record(entry("ORD-6", CHARGE, clock.now())).record
    (read,) = stores.compensation.entries("ORD-6")
    assert read == stored
    assert read.classification.value == "Restricted" and read.retention_days == 540
    assert read.retain_until == clock.now() + timedelta(days=540)


def test_log_is_shared_by_every_client_of_the_store(make_stores, clock):
    writer, reader = make_stores(), make_stores()
    writer.compensation.record(entry("ORD-7", RESERVE, clock.now()))
    reader.compensation.record(entry("ORD-7", REFUND, clock.now(), "ORD-7:comp:1"))
    assert [(e.seq, e.step.value) for e in writer.compensation.entries("ORD-7")] == [
        (1, "reserve_inventory"), (2, "refund")]


def test_purge_deletes_only_entries_past_their_retention(stores, clock):
    log = stores.compensation
    log.record(entry("ORD-8", {"step": "release_inventory", "reservationId": "RES-8"},
                     clock.now()))  # Internal: 90 days
    log.record(entry("ORD-8", CHARGE, clock.now()))  # Restricted: 540 days
    assert log.purge_expired(clock.now() + timedelta(days=89), 100) == 0
    assert log.purge_expired(clock.now() + timedelta(days=90), 100) == 1
    assert [e.step.value for e in log.entries("ORD-8")] == ["charge"]
    with pytest.raises(ValueError, match="limit"):
        log.purge_expired(clock.now(), 0)


def test_record_all_writes_the_entries_in_order_after_those_logged(stores, clock):
    log = stores.compensation
    log.record(entry("ORD-20", RESERVE, clock.now()))
    got = log.record_all([entry("ORD-20", CHARGE, clock.now()), entry("ORD-20", SHIP, clock.now())])
    assert [(c.created, c.record.seq, c.record.step.value) for c in got] == [
        (True, 2, "charge"), (True, 3, "ship")]
    assert [(e.seq, e.step.value) for e in log.entries("ORD-20")] == [
        (1, "reserve_inventory"), (2, "charge"), (3, "ship")]
    assert log.entries("ORD-20")[1:] == [c.record for c in got]


def test_record_all_again_or_in_part_again_stores_each_step_once(stores, clock):
    log = stores.compensation
    first = log.record_all([entry("ORD-21", CHARGE, clock.now())])
    clock.advance(timedelta(minutes=1))
    again = log.record_all([entry("ORD-21", CHARGE, clock.now(), "ORD-21:2"),
                            entry("ORD-21", SHIP, clock.now(), "ORD-21:2")])
    assert [c.created for c in again] == [False, True]
    assert again[0].record == first[0].record and again[1].record.seq == 2
    assert log.record_all([entry("ORD-21", CHARGE, clock.now()),
                           entry("ORD-21", SHIP, clock.now())]) == [
        type(c)(c.record, created=False) for c in again]
    assert len(log.entries("ORD-21")) == 2


def test_record_all_keeps_what_precedes_a_conflict_and_writes_nothing_after(stores, clock):
    log = stores.compensation
    log.record(entry("ORD-22", CHARGE, clock.now()))
    other = {**CHARGE, "paymentId": "pay_other"}
    with pytest.raises(ConflictError, match="charge"):
        log.record_all([entry("ORD-22", RESERVE, clock.now()), entry("ORD-22", other, clock.now()),
                        entry("ORD-22", SHIP, clock.now())])
    assert [(e.seq, e.step.value) for e in log.entries("ORD-22")] == [
        (1, "charge"), (2, "reserve_inventory")]
    assert log.entries("ORD-22")[0].details.payment_id == "pay_1"


@pytest.mark.parametrize(("second", "message"), [
    (lambda now: entry("ORD-24", SHIP, now), "another order"),
    (lambda now: entry("ORD-23", CHARGE, now, "ORD-23:2"), "charge is given twice"),
])
def test_record_all_refuses_two_orders_or_a_step_twice_before_writing(stores, clock, second,
                                                                      message):
    with pytest.raises(ValueError, match=message):
        stores.compensation.record_all([entry("ORD-23", CHARGE, clock.now()),
                                        second(clock.now())])
    assert stores.compensation.entries("ORD-23") == []
    assert stores.compensation.record_all([]) == []
