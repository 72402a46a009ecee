"""``python -m devhost peek`` shows a message whole: its body and why it was dead-lettered."""

import json

from rich.console import Console
from typer.testing import CliRunner

from devhost.run import cli
from devhost.run.cli import app
from sqlitebus import open_engine


def test_peek_shows_whole_bodies_and_the_dead_letter_description(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "console", Console(width=400))
    body = json.dumps({"schemaVersion": 1, "clientId": "acme", "replyTo": "replies-acme",
                       "order": {"orderId": "ORD-1", "customerId": "C-1", "lines": []}})
    assert len(body) > 100
    with open_engine(tmp_path) as engine:
        engine.send("orders-acme", body)
        (message,) = engine.receive("orders-acme", 1, "submission")
        engine.dead_letter("orders-acme", message.lock_token, "InvalidOrder",
                           "order.lines: List should have at least 1 item after validation")
    shown = CliRunner().invoke(app, ["peek", "orders-acme", "--dead-letter", "--data-dir",
                                     str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert body in shown.output
    assert ("InvalidOrder: order.lines: List should have at least 1 item after validation"
            in shown.output)
    cut = CliRunner().invoke(app, ["peek", "orders-acme", "--dead-letter", "--data-dir",
                                   str(tmp_path), "--body-chars", "20"])
    assert body[:19] + "…" in cut.output and body not in cut.output
