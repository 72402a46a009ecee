"""``python -m devhost peek`` shows a message whole: its body and why it was dead-lettered."""

import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from devhost.run import cli
from devhost.run.cli import app
from devhost.triggers.queue_catalog import app_queue_catalog
from sqlitebus import open_engine

REPO = Path(__file__).resolve().parents[3]


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
                                     str(tmp_path), "--app-dir", str(REPO)])
    assert shown.exit_code == 0, shown.output
    assert body in shown.output
    assert ("InvalidOrder: order.lines: List should have at least 1 item after validation"
            in shown.output)
    cut = CliRunner().invoke(app, ["peek", "orders-acme", "--dead-letter", "--data-dir",
                                   str(tmp_path), "--body-chars", "20", "--app-dir", str(REPO)])
    assert body[:19] + "…" in cut.output and body not in cut.output


def test_queues_of_an_app_without_a_catalogue_are_those_its_host_made(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "console", Console(width=200))
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    catalog, _ = app_queue_catalog(app_dir, ["work-items"], environ={})
    with open_engine(tmp_path / "data", catalog=catalog) as engine:
        engine.send("work-items", "one")
    shown = CliRunner().invoke(app, ["queues", "--data-dir", str(tmp_path / "data"),
                                     "--app-dir", str(app_dir)])
    assert shown.exit_code == 0, shown.output
    assert ["work-items", "1", "0", "0"] in [line.strip("│ ").split() for line in
                                           shown.output.replace("│", " ").splitlines()]
    peeked = CliRunner().invoke(app, ["peek", "work-items", "--data-dir", str(tmp_path / "data"),
                                      "--app-dir", str(app_dir)])
    assert "body: one" in peeked.output


def test_an_unknown_queue_is_one_line_and_exit_2(tmp_path):
    shown = CliRunner().invoke(app, ["peek", "no-such-queue", "--data-dir", str(tmp_path),
                                     "--app-dir", str(REPO)])
    assert shown.exit_code == 2
    assert shown.stderr.startswith("devhost: queue 'no-such-queue' not found: declare it")
    assert shown.stderr.count("\n") == 1 and shown.stdout == ""
