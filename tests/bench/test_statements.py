"""bench.statements: trips per order, counted on a tiny run."""

import json

import pytest

from bench import statements


def test_two_orders_are_counted_by_file_with_the_simulator_left_out(tmp_path, monkeypatch):
    # As `python -m bench.statements` runs: every line priced against the catalogue.
    monkeypatch.setenv("PRICE_FROM_CATALOGUE", "true")
    result = statements.measure(2, tmp_path)
    assert result["states"] == {"Processed": 2}
    by_file = result["statements_per_order_by_file"]
    assert {"taskhub.sqlite", "servicebus.sqlite", "ledger.sqlite"} <= set(by_file)
    assert result["host_statements_per_order"] == round(
        sum(n for name, n in by_file.items() if name != "ledger.sqlite"), 1)
    assert result["voluntary_context_switches_per_order"] > 0
    json.dumps(result)


def test_orders_must_be_positive(capsys):
    with pytest.raises(SystemExit):
        statements.main(["--orders", "0"])
    assert "--orders: must be at least 1" in capsys.readouterr().err
