"""The ledger keeps what it recorded for its retention only (issue 14: no unbounded growth)."""

from datetime import timedelta

import httpx
import pytest

from clocks import ManualClock
from simulator import Ledger, create_app
from simulator.cli import parse_args
from simulator.ledger import PURGE_REQUESTS, PURGE_SETTLED

from .helpers import charge, ship

pytestmark = pytest.mark.anyio


async def undo(client, service, order_key, key):
    path, field = {"payment": ("/payments/refunds", "chargeKey"),
                   "shipping": ("/shipments/cancellations", "shipmentKey")}[service]
    response = await client.post(path, json={"orderId": order_key, field: key},
                                 headers={"Idempotency-Key": f"{key}:undo"})
    assert response.status_code == 200, response.text


async def test_settled_effects_and_old_answers_go_open_effects_stay(
        make_client, ledger_path, clock: ManualClock):
    client = make_client()
    await charge(client, "settled", "settled:charge")
    await ship(client, "settled", "settled:ship")
    await undo(client, "payment", "settled", "settled:charge")
    await undo(client, "shipping", "settled", "settled:ship")
    await charge(client, "open", "open:charge")  # never refunded
    clock.advance(timedelta(days=10))
    await charge(client, "new", "new:charge")
    with Ledger(ledger_path) as ledger:
        assert ledger.purge_before(clock.now() - timedelta(days=20)) == 0
        assert ledger.purge_before(clock.now() - timedelta(days=5)) > 0
        assert [(e.order_key, e.kind) for e in ledger.side_effects()] == [
            ("open", "charge"), ("new", "charge")]
        assert ledger.request_count("payment", "settled") == 0
        assert ledger.request_count("payment", "open") == 1
        assert ledger.request_count("payment", "new") == 1
    # The key is forgotten: the same request is served as new, as a real API does.
    response = await charge(client, "settled", "settled:charge")
    assert response.headers.get("Idempotent-Replayed") is None


async def test_the_app_purges_on_start_and_then_periodically(ledger_path, clock: ManualClock):
    with Ledger(ledger_path) as ledger:
        ledger.record_request("payment", "gone", "charge")
    app = create_app(None, clock, ledger_path, retention=timedelta(days=1), purge_every_s=3600)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            assert (await client.get("/_admin/stats")).json()["requests"] == []


def test_the_command_line_keeps_thirty_days_unless_told():
    assert parse_args(["--ledger", "x.sqlite"]).retention_days == 30.0
    assert parse_args(["--ledger", "x.sqlite", "--retention-days", "0"]).retention_days == 0.0



async def test_a_charge_is_refunded_after_the_ledger_forgot_its_key(make_client, ledger_path,
                                                                     clock: ManualClock):
    client = make_client()
    await charge(client, "acme~ORD-1", "acme~ORD-1:charge")
    clock.advance(timedelta(days=31))  # e.g. CompensationFailed until an operator acts
    with Ledger(ledger_path) as ledger:
        ledger.purge_before(clock.now() - timedelta(days=30))
    refund = await client.post("/payments/refunds", json={
        "orderId": "acme~ORD-1", "chargeKey": "acme~ORD-1:charge"},
        headers={"Idempotency-Key": "acme~ORD-1:refund"})
    assert refund.json().get("status") == "refunded", refund.text


@pytest.mark.parametrize("days", ["inf", "nan", "-1", "36501"])
def test_a_retention_no_date_can_hold_is_refused_naming_the_option(days, capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["--ledger", "x.sqlite", "--retention-days", days])
    assert exited.value.code == 2
    assert "--retention-days: must be 0 to 36500 (days)" in capsys.readouterr().err


def test_the_purge_searches_by_index_never_scans_per_row(ledger_path):
    # The purge ran for minutes on a ledger of 36,000 orders when each request row scanned
    # every stored answer (a substr() match): the correlated lookups must be index searches.
    with Ledger(ledger_path) as ledger:
        conn = ledger._conn
        plans = {sql: [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}",
                                                      ("x", "x")[:sql.count("?")])]
                 for sql in (PURGE_SETTLED, PURGE_REQUESTS)}
    settled, requests = plans[PURGE_SETTLED], plans[PURGE_REQUESTS]
    assert any("SEARCH u USING INDEX side_effects_ref" in step for step in settled), settled
    assert any(step.startswith("SEARCH i USING") and "(service=? AND idempotency_key>? AND "
               "idempotency_key<?)" in step for step in requests), requests
    assert any("SEARCH e USING" in step for step in requests), requests
    assert sum(step.startswith("SCAN") for step in requests) == 1, requests  # requests only


def test_answers_sharing_a_key_prefix_keep_only_their_own_order(ledger_path):
    # "ab" must not count the answers of order "ab:c..."; ';' sorts right after ':'.
    with Ledger(ledger_path) as ledger:
        conn = ledger._conn
        conn.executescript(
            "INSERT INTO requests VALUES ('payment', 'ab', 'charge', 1);"
            "INSERT INTO requests VALUES ('payment', 'abc', 'charge', 1);"
            "INSERT INTO requests VALUES ('payment', 'ab;', 'charge', 1);"
            "INSERT INTO idempotency VALUES ('payment', 'abc:charge', 'f', 201, '{}', "
            "'2030-01-01T00:00:00+00:00');")
        conn.execute(PURGE_REQUESTS)
        left = sorted(r[0] for r in conn.execute("SELECT order_id FROM requests"))
    assert left == ["abc"]
