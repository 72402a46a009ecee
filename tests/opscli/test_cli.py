"""The operator CLI against a local data folder, without a running host."""

import json

import pytest
from typer.testing import CliRunner

from azurekit.app_settings import HOST_URL_FILE
from opscli.cli import app, hoist_data_dir
from orders import runtime
from orders.models import Order, ProcessState
from tests.e2e.harness import make_order
from tests.support.stores import put, sqlite_stores

runner = CliRunner()


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "_host_time", lambda: None)
    for key in ("STORE_BACKEND", "MESSAGING_BACKEND", "MAX_IN_FLIGHT"):
        monkeypatch.delenv(key, raising=False)
    stores = sqlite_stores(tmp_path)
    put(stores.states, "ORD-00001", ProcessState.ERROR, attempt=3, failures=3,
        failure_reason="payment: card declined")
    put(stores.states, "ORD-00002", ProcessState.PROCESSED, attempt=1)
    put(stores.states, "ORD-00003", ProcessState.PENDING)
    stores.orders.create_if_absent(Order.of_client(make_order(1), "ORD-00001"))  # legacy key
    stores.close()
    return tmp_path


def cli(data_dir, *args):
    return runner.invoke(app, ["--data-dir", str(data_dir), *args], env={"COLUMNS": "200"})


def test_list_error_as_json_and_as_table(data_dir):
    result = cli(data_dir, "list", "error", "--json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [o["orderId"] for o in listed["orders"]] == ["ORD-00001"] and not listed["more"]
    table = cli(data_dir, "list", "Error")
    assert table.exit_code == 0 and "ORD-00001" in table.stdout and "card declined" in table.stdout
    assert cli(data_dir, "list", "nonsense").exit_code == 2


def test_resubmit_twice_changes_the_record_once(data_dir):
    first = cli(data_dir, "resubmit", "ORD-00001", "--by", "alice")
    assert first.exit_code == 0, first.output
    second = cli(data_dir, "resubmit", "ORD-00001")
    assert second.exit_code == 1 and "Pending, not Error" in " ".join(second.stdout.split())
    missing = cli(data_dir, "resubmit", "ORD-09999")
    assert missing.exit_code == 1 and "no state record" in missing.stdout
    stores = sqlite_stores(data_dir)
    record = stores.states.get("ORD-00001")
    stores.close()
    assert (record.process_state, record.failure_count, record.locked_by) == \
        (ProcessState.PENDING, 0, None)


def test_an_order_is_named_by_its_key_or_by_client_and_order_id(data_dir):
    stores = sqlite_stores(data_dir)
    for client_id in ("acme", "globex"):  # the same OrderID, two clients' orders
        put(stores.states, "ORD-00007", ProcessState.ERROR, attempt=3, failures=3,
            client_id=client_id)
    stores.close()
    listed = json.loads(cli(data_dir, "list", "error", "--client", "globex", "--json").stdout)
    assert [o["orderId"] for o in listed["orders"]] == ["globex~ORD-00007"]
    table = cli(data_dir, "list", "error", "--client", "acme")
    assert "acme~ORD-00007" in table.stdout and "globex~" not in table.stdout
    first = cli(data_dir, "resubmit", "ORD-00007", "--client", "acme", "--by", "alice")
    assert first.exit_code == 0 and "acme~ORD-00007:4" in " ".join(first.stdout.split())
    again = cli(data_dir, "resubmit", "acme~ORD-00007")
    assert again.exit_code == 1 and "Pending, not Error" in " ".join(again.stdout.split())
    assert cli(data_dir, "resubmit", "globex~ORD-00007").exit_code == 0  # untouched before
    bad = cli(data_dir, "show", "ORD-00007", "--client", "Not_A_Client")
    assert bad.exit_code == 2 and "client_id" in bad.output


def test_summary_counts_and_dead_letters(data_dir):
    result = cli(data_dir, "summary", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["counts"]["Error"] == 1 and summary["counts"]["Pending"] == 1
    assert summary["inFlight"] == 1 and summary["maxInFlight"] == 1000
    assert summary["deadLetters"]["orders"] == 0


def test_show_without_a_reachable_host_still_shows_the_record(data_dir):
    result = cli(data_dir, "show", "ORD-00001", "--host-url", "http://127.0.0.1:9", "--json")
    assert result.exit_code == 3, result.output  # the report, then why no history is in it
    assert result.stderr.startswith("opscli: no history could be read from http://127.0.0.1:9")
    assert result.stderr.count("\n") == 1
    report = json.loads(result.stdout)
    assert report["record"]["processState"] == "Error"
    assert report["order"]["orderId"] == "ORD-00001"
    assert [a["instanceId"] for a in report["attempts"]] == [f"ORD-00001:{n}" for n in (1, 2, 3)]
    assert all("cannot read instance" in a["error"] for a in report["attempts"])
    quiet = cli(data_dir, "show", "ORD-00001", "--no-history")
    assert quiet.exit_code == 0 and "no orchestration history" in quiet.stdout
    assert cli(data_dir, "show", "ORD-09999").exit_code == 1


def test_show_reads_histories_from_the_url_the_local_host_recorded(data_dir):
    (data_dir / HOST_URL_FILE).write_text("http://127.0.0.1:9\n")
    result = cli(data_dir, "show", "ORD-00001", "--json")
    assert result.exit_code == 3
    assert "from http://127.0.0.1:9 " in result.stderr


def test_show_of_an_order_id_alone_names_the_client_option(data_dir):
    stores = sqlite_stores(data_dir)
    put(stores.states, "ORD-00008", ProcessState.ERROR, attempt=1, client_id="acme")
    stores.close()
    result = cli(data_dir, "show", "ORD-00008", "--no-history")
    assert result.exit_code == 1
    assert result.stderr == ("opscli: order ORD-00008: no state record and no order (an "
                             "OrderID alone is not a key: name its client, 'show ORD-00008 "
                             "--client ID', or give the key 'ID~ORD-00008')\n")


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_data_dir_that_does_not_exist_is_one_line_and_not_created(tmp_path, where):
    missing = tmp_path / "no-such-folder"
    option = ["--data-dir", str(missing)]
    argv = [*option, "summary"] if where == "before" else ["summary", *option]
    result = runner.invoke(app, hoist_data_dir(argv))
    assert result.exit_code == 2
    assert result.stderr == (f"opscli: --data-dir {missing}: no such folder (give the folder "
                             "the local host runs with, as 'devhost start --data-dir' took "
                             "it)\n")
    assert not missing.exists()


def test_data_dir_is_taken_after_the_command_as_devhost_takes_it(data_dir):
    result = runner.invoke(app, hoist_data_dir(["list", "error", "--json", "--data-dir",
                                                str(data_dir)]))
    assert result.exit_code == 0, result.output
    assert [o["orderId"] for o in json.loads(result.stdout)["orders"]] == ["ORD-00001"]


def test_show_counts_an_orders_lines_when_they_are_withheld(data_dir):
    result = cli(data_dir, "show", "ORD-00001", "--no-history")
    assert result.exit_code == 0
    row = next(line for line in result.stdout.splitlines() if " lines " in line)
    assert row.split()[-2] == str(len(make_order(1).lines))


def test_budget_and_bad_settings(data_dir, monkeypatch):
    result = cli(data_dir, "budget")
    assert result.exit_code == 0 and "payment: at most" in result.stdout
    monkeypatch.setenv("STORE_BACKEND", "cosmos")
    monkeypatch.setenv("COSMOS_ENDPOINT", "")
    broken = cli(data_dir, "list", "error")
    assert broken.exit_code == 2 and "COSMOS_ENDPOINT" in broken.stdout


def test_without_a_data_dir_the_local_default_is_dot_data(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "_host_time", lambda: None)
    for key in ("STORE_BACKEND", "MESSAGING_BACKEND", "DEVHOST_DATA_DIR"):
        monkeypatch.delenv(key, raising=False)
    stores = sqlite_stores(tmp_path / ".data")
    put(stores.states, "ORD-00007", ProcessState.ERROR, attempt=3, failures=3)
    stores.close()
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["list", "error", "--json"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert [o["orderId"] for o in json.loads(result.stdout)["orders"]] == ["ORD-00007"]


def test_summary_uses_the_settings_the_local_host_recorded_unless_the_environment_sets_them(
        data_dir, monkeypatch):
    (data_dir / "app-settings.json").write_text(json.dumps({
        "ORDER_CLIENTS": "shop-a,shop-b", "MAX_IN_FLIGHT": "250", "NOT_A_SETTING": "x"}))
    summary = json.loads(cli(data_dir, "summary", "--json").stdout)
    assert summary["maxInFlight"] == 250
    assert {"orders-shop-a", "orders-shop-b"} <= set(summary["deadLetters"])
    monkeypatch.setenv("MAX_IN_FLIGHT", "40")
    assert json.loads(cli(data_dir, "summary", "--json").stdout)["maxInFlight"] == 40


def test_an_unreadable_host_settings_file_is_ignored(data_dir):
    (data_dir / "app-settings.json").write_text("{not json")
    result = cli(data_dir, "summary", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["maxInFlight"] == 1000


def run_budget(tmp_path, **settings):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "opscli", "--data-dir", str(tmp_path), "budget"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200", **settings})


def test_budget_command_exits_non_zero_when_over_budget(tmp_path):
    within = run_budget(tmp_path, MAX_FAILURES="3")
    assert within.returncode == 0
    assert within.stdout.splitlines() == [
        "payment: at most 120 calls per order (budget 200: ok)",
        "shipping: at most 120 calls per order (budget 200: ok)"]
    over = run_budget(tmp_path, MAX_FAILURES="50")
    assert over.returncode == 1
    assert "payment: at most 1060 calls per order (budget 200: OVER BUDGET)" in over.stdout
    invalid = run_budget(tmp_path, MAX_FAILURES="many")
    assert invalid.returncode == 2
    (line,) = invalid.stderr.splitlines()
    assert line.startswith("invalid app settings: MAX_FAILURES: Input should be a valid integer")


def test_a_piped_table_is_200_columns_unless_columns_says_otherwise(monkeypatch):
    from opscli import cli as ops_cli

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(ops_cli.sys.stdout, "isatty", lambda: False, raising=False)
    assert ops_cli.out().width == ops_cli.PIPED_WIDTH == 200
    monkeypatch.setenv("COLUMNS", "120")
    assert ops_cli.out().width == 120
