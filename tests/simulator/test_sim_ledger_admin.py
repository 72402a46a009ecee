import json
from datetime import timedelta

import pytest
from starlette.applications import Starlette

from clocks import ManualClock
from simulator import Ledger
from simulator.cli import build_app, parse_args
from simulator.config import load_update

from .helpers import charge, ship

pytestmark = pytest.mark.anyio


async def test_ledger_api_and_admin_endpoints_agree(make_client, ledger_path, clock: ManualClock):
    client = make_client()
    await charge(client, "order-1", "order-1:charge", amount="5.00")
    clock.advance(timedelta(minutes=1))
    await ship(client, "order-1", "order-1:ship")
    await ship(client, "order-1", "order-1:ship")  # replay: counted, not performed
    await charge(client, "order-2", "order-2:charge")

    with Ledger(ledger_path) as ledger:
        effects = ledger.side_effects()
        assert [(e.service, e.kind, e.order_key) for e in effects] == [
            ("payment", "charge", "order-1"),
            ("shipping", "ship", "order-1"),
            ("payment", "charge", "order-2"),
        ]
        assert effects[1].at == clock.now()
        assert effects[0].at == clock.now() - timedelta(minutes=1)
        assert ledger.side_effects(order_key="order-1", service="shipping")[0].idempotency_key == (
            "order-1:ship"
        )
        assert set(ledger.effect_counts().values()) == {1}
        assert ledger.request_count("shipping", "order-1", "ship") == 2
        assert ledger.request_count("shipping", "order-1", "cancel") == 0

    listed = (await client.get("/_admin/ledger", params={"orderId": "order-1"})).json()
    assert [(e["kind"], e["idempotencyKey"]) for e in listed["sideEffects"]] == [
        ("charge", "order-1:charge"), ("ship", "order-1:ship"),
    ]
    assert listed["sideEffects"][0]["amount"] == "5.00"
    stats = (await client.get("/_admin/stats")).json()
    assert {"service": "shipping", "orderId": "order-1", "operation": "ship", "count": 2} in (
        stats["requests"]
    )
    assert {"service": "payment", "kind": "charge", "orderId": "order-2", "count": 1} in (
        stats["sideEffects"]
    )


async def test_admin_faults_read_and_partial_update(make_client):
    client = make_client()
    initial = (await client.get("/_admin/faults")).json()
    assert initial["payment"]["transient_rate"] == 0.0
    changed = await client.post(
        "/_admin/faults", json={"seed": 3, "shipping": {"transient_rate": 0.25, "latency_s": 1}}
    )
    assert changed.status_code == 200
    now = (await client.get("/_admin/faults")).json()
    assert now["seed"] == 3
    assert now["shipping"]["transient_rate"] == 0.25
    assert now["payment"] == initial["payment"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"payment": {"transient_rate": 1.5}}, "payment.transient_rate"),
        ({"payment": {"transient_ratio": 0.5}}, "payment.transient_ratio"),
        ({"payment": {"transient_statuses": [500]}}, "payment.transient_statuses.0"),
        ({"shipping": {"outage_start": "2030-01-01T00:00:00Z"}}, "outage_end: required"),
        ({"payment": {"outage_for_s": 5, "outage_end": "2030-01-01T00:00:00Z"}}, "outage_for_s"),
        ({"billing": {}}, "billing"),
    ],
)
async def test_admin_rejects_invalid_knobs_naming_the_field(make_client, body, expected):
    client = make_client()
    response = await client.post("/_admin/faults", json=body)
    assert response.status_code == 400
    assert expected in response.json()["message"]


def test_cli_builds_app_from_config_file(tmp_path):
    config = tmp_path / "faults.json"
    config.write_text(json.dumps({
        "seed": 1, "payment": {"decline": {"order-9": {"status": 402, "reason": "card_declined"}}},
    }))
    args = parse_args(["--port", "7100", "--ledger", str(tmp_path / "l.sqlite"),
                       "--config", str(config)])
    assert (args.port, args.host) == (7100, "127.0.0.1")
    app = build_app(args)
    assert isinstance(app, Starlette)
    try:
        assert app.state.faults.config.payment.decline["order-9"].reason == "card_declined"
        assert app.state.faults.config.seed == 1
    finally:
        app.state.ledger.close()


def test_cli_requires_ledger_and_reports_bad_config_file(tmp_path, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--port", "7072"])
    assert "--ledger" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"payment": {"latency_s": -1}}))
    with pytest.raises(ValueError, match=r"bad\.json: invalid fault config: payment\.latency_s"):
        load_update(bad)
    bad.write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_update(bad)
