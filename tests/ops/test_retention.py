"""The retention pass deletes compensation log entries past retainUntil, in bounded rounds."""

import asyncio
from datetime import timedelta

import pytest
from pydantic import ValidationError

from ops import retention
from ops.retention import purge_compensation_log
from orders.models import CompensationEntry
from orders.settings import Settings

RESERVE = {"step": "reserve_inventory", "reservationId": "RES-1",
           "lines": [{"sku": "SKU-A", "quantity": 2}]}
CHARGE = {"step": "charge", "paymentId": "pay_1", "amount": "20.00", "currency": "USD"}


def log_entries(stores, clock, orders):
    for n in range(orders):
        for details in (RESERVE, CHARGE):
            stores.compensation.record(CompensationEntry.new(
                f"ORD-{n}", details, instance_id=f"ORD-{n}:1", workflow_version=1,
                now=clock.now()))


def test_entries_go_when_their_classification_s_retention_ends(services, stores, clock):
    log_entries(stores, clock, 3)
    clock.advance(timedelta(days=179))
    assert purge_compensation_log(services).deleted == 0
    clock.advance(timedelta(days=1))  # 180 days: Confidential goes
    assert purge_compensation_log(services).deleted == 3
    assert [e.step.value for e in stores.compensation.entries("ORD-0")] == ["charge"]
    clock.advance(timedelta(days=360))  # 540 days: Restricted goes
    assert purge_compensation_log(services).deleted == 3
    assert stores.compensation.entries("ORD-0") == []


def test_a_large_backlog_is_cleared_over_bounded_passes(services, stores, clock, monkeypatch):
    monkeypatch.setattr(retention, "MAX_ROUNDS", 2)
    services.settings = services.settings.model_copy(update={"RETENTION_PURGE_BATCH": 2})
    log_entries(stores, clock, 3)
    clock.advance(timedelta(days=600))
    first = purge_compensation_log(services)
    assert (first.deleted, first.rounds, first.complete) == (4, 2, False)
    second = purge_compensation_log(services)
    assert (second.deleted, second.complete) == (2, True)


@pytest.mark.parametrize("days", ["inf", "1e6", "0", "-1", "nan"])
def test_retention_days_whose_cutoff_is_no_date_are_refused_at_load(days, tmp_path):
    with pytest.raises(ValidationError) as refused:
        Settings(DEVHOST_DATA_DIR=str(tmp_path), RETENTION_DAYS=days)
    assert [e["loc"] for e in refused.value.errors()] == [("RETENTION_DAYS",)]


def test_the_longest_retention_still_makes_a_purge_call(services, monkeypatch):
    asked = {}

    async def no_pages(client, **window):
        asked.update(window)
        return
        yield

    monkeypatch.setattr(retention, "instance_pages", no_pages)
    longest = Settings.model_fields["RETENTION_DAYS"].metadata
    days = next(m.le for m in longest if hasattr(m, "le"))
    assert asyncio.run(retention.purge_instances(object(), services.clock.now(), days)) == 0
    assert asked["created_time_to"].year < 2000
