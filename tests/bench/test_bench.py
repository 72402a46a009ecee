"""Smoke tests of the benchmarks: each runs with a tiny N and returns sane numbers."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from bench import __main__ as bench_main
from bench import chain5, fanout, orders, replay, report, sqlite_limit
from bench.peers.common import run_peer, summarize
from bench.seed import seed_completed
from demo.clients import ClientBatch
from devhost.taskhub.schema import SCHEMA
from simulator.ledger import Ledger


def test_host_chain5_tiny_run_completes_every_instance():
    result = chain5.run_once(5)
    assert result["seconds"] > 0
    assert result["activities_per_s"] == pytest.approx(5 * result["instances_per_s"])


def test_host_chain5_on_two_host_processes_completes_every_instance():
    # devhost start --workers 2: the client starts only once both processes serve, and
    # run_once_processes checks every instance's output.
    result = chain5.run_once_processes(20, workers=2)
    assert result["instances_per_s"] == pytest.approx(20 / result["seconds"])


def test_host_chain5_on_host_processes_is_timed_to_the_last_completion(monkeypatch):
    # The host's stop takes an hour by the benchmark's clock: none of it is the chain's.
    offset = [0.0]

    class SlowToStop(subprocess.Popen):
        def wait(self, timeout=None):
            if timeout is not None:  # run_once_processes's wait for the stopped host
                offset[0] += 3600.0
            return super().wait(timeout)

    clock = SimpleNamespace(perf_counter=lambda: time.perf_counter() + offset[0],
                            sleep=time.sleep)
    monkeypatch.setattr(chain5, "time", clock)
    monkeypatch.setattr(chain5.subprocess, "Popen", SlowToStop)
    result = chain5.run_once_processes(10, workers=1)
    assert offset[0] == 3600.0
    assert 0 < result["seconds"] < 600


@pytest.mark.parametrize("peer", ["dbos", "durabletask"])
def test_peer_runs_chain5_in_its_own_process(peer):
    pytest.importorskip(peer)
    result = run_peer(bench_main.PEERS[peer], 5, timeout_s=60)
    assert result["n"] == 5
    assert result["peer"] == peer
    assert 0 < result["instances_per_s"] < 100_000
    assert result["activities_per_s"] == pytest.approx(5 * result["instances_per_s"])


def test_run_peer_reports_a_failing_child_with_its_output():
    with pytest.raises(RuntimeError, match=r"bench\.peers\.no_such_peer failed \(exit 1\)"):
        run_peer("bench.peers.no_such_peer", 5, timeout_s=30)


def test_summarize_gives_min_median_max_and_keeps_the_configuration():
    runs = [{"n": 4, "seconds": s, "instances_per_s": 4 / s, "activities_per_s": 20 / s,
             "threads": 8} for s in (2.0, 1.0, 4.0)]
    doc = summarize(4, runs)
    assert doc["instances_per_s"] == {"min": 1.0, "median": 2.0, "max": 4.0}
    assert doc["activities_per_s_median"] == 10.0
    assert doc["config"] == {"threads": 8}


@pytest.mark.fsync  # measures FULL itself
@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
def test_commit_rate_commits_one_row_transactions(synchronous):
    result = sqlite_limit.commit_rate(synchronous, duration_s=0.05)
    assert result["commits"] >= 10
    assert result["commits_per_s"] == pytest.approx(result["commits"] / result["seconds"])


def test_commit_rate_rejects_an_unknown_synchronous_level():
    with pytest.raises(ValueError, match="synchronous"):
        sqlite_limit.commit_rate("OFF", duration_s=0.01)


def test_commit_counter_tells_writing_empty_and_autocommit_transactions_apart(tmp_path):
    counter = sqlite_limit.CommitCounter()
    with counter.active():
        conn = sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)
    conn.execute("CREATE TABLE t (v INTEGER)")  # autocommit DDL: not a row write
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("SELECT * FROM t").fetchall()
    conn.execute("COMMIT")
    conn.execute("INSERT INTO t VALUES (2)")  # autocommit
    conn.close()
    assert counter.snapshot() == (1, 1, 1)
    assert counter.total == 2
    later = sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)
    later.execute("INSERT INTO t VALUES (3)")  # opened after the block: not traced
    later.close()
    assert counter.snapshot() == (1, 1, 1)


def test_host_commits_are_counted_per_activity():
    result = sqlite_limit.host_commits(5)
    assert 0 < result["commits_per_activity"] <= 11 / 5
    assert result["commits_per_instance"] == pytest.approx(5 * result["commits_per_activity"])


def test_fanout_tiny_run_sums_every_result():
    result = fanout.run_once(5)
    assert result["seconds"] > 0
    assert result["episodes"] >= 2  # one to schedule, at least one to collect


def test_fanout_is_timed_to_its_completion(monkeypatch):
    # The host's stop takes an hour by the benchmark's clock: none of it is the fan-out's.
    offset = [0.0]

    class SlowToStop(fanout.LocalHost):
        def stop(self, *args, **kwargs):
            offset[0] += 3600.0
            return super().stop(*args, **kwargs)

    clock = SimpleNamespace(perf_counter=lambda: time.perf_counter() + offset[0],
                            sleep=time.sleep)
    monkeypatch.setattr(fanout, "time", clock)
    monkeypatch.setattr(fanout, "LocalHost", SlowToStop)
    result = fanout.run_once(5)
    assert offset[0] == 3600.0
    assert 0 < result["seconds"] < 600


def test_replay_cost_is_timed_for_each_history_length():
    result = replay.run(repeat=3)
    assert len(result["us_per_handler_call_by_history_length"]) == 6
    assert result["replay_us_per_chain5_instance"] > 0


def test_orders_summary_line_is_parsed_into_numbers():
    out = ("demo: submitted\nsummary: orders=200 processed=197 error=3 recovered=12 lost=0 "
           "duplicate_effects=0 unbalanced=0 orders_per_s=8.4 p50_ms=812 p99_ms=n/a\n")
    assert orders.parse_summary(out) == {
        "orders": 200, "processed": 197, "error": 3, "recovered": 12, "lost": 0,
        "duplicate_effects": 0, "unbalanced": 0, "orders_per_s": 8.4, "p50_ms": 812,
        "p99_ms": "n/a"}
    with pytest.raises(ValueError, match="summary"):
        orders.parse_summary("demo failed\n")


@pytest.mark.slow
@pytest.mark.parametrize(("version", "episodes", "actions"), [(1, 13, 25), (7, 6, 10),
                                                          (9, 6, 11)])
def test_orders_tiny_fault_free_run_at_a_fixed_rate_measures_latency_and_host(
        tmp_path, version, episodes, actions):
    result = orders.run(4, faults=False, timeout_s=120, data_root=tmp_path, rate=20.0,
                        env={"WORKFLOW_VERSION": str(version)})
    assert (result["faults"], result["offered"]) == ("none", "20/s")
    assert (result["orders"], result["processed"], result["lost"]) == (4, 4, 0)
    assert result["orders_per_s"] > 0
    lat = result["latency"]
    assert lat["count"] == 4
    assert 0 < lat["p50_ms"] <= lat["p95_ms"] <= lat["p99_ms"] <= lat["max_ms"]
    assert result["p50_ms"] == round(lat["p50_ms"])
    assert result["host"]["cpu_s"] > 0 and result["host"]["processes"] >= 1
    assert 20 < result["host"]["peak_rss_mib"] < 4096
    # What the 4 orders cost, counted from the run's durable state: each processed attempt
    # of a workflow version has the same history, whatever the retries. Version 7 does
    # version 1's steps in 3 activities instead of 10, with 1 timer instead of 2; version 9
    # in 3 activities with a timer per step again (docs/performance.md, docs/pipeline.md).
    processed = result["cost"]["counts"]["attempts"]["order_workflow:processed"]
    assert (processed["instances"], processed["episodes"], processed["dts_actions"]) == (
        4, episodes, actions)
    each = result["cost"]["per_order"]
    assert each["servicebus"]["completes"] >= 7  # submit, 2 requests, 2 replies, 2 statuses
    assert each["http"]["remote"] >= 2 and each["stores"]["ru"] > 0
    assert each["usd_per_1000"]["total"] > 0


def test_a_seeded_task_hub_holds_copies_of_the_template_completed_instances(tmp_path):
    template = tmp_path / "template.sqlite"
    conn = sqlite3.connect(template)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO instances (instance_id, name, runtime_status, created_at, "
                 "last_updated_at, execution_id, replay_state) VALUES "
                 "('a~1:1', 'order_workflow', 'Completed', '2030-01-31T10:00:00.123456Z', "
                 "'2030-01-31T10:00:01.000000Z', 'e1', '{}'), "
                 "('a~2:1', 'order_workflow', 'Running', '2030-01-31T10:00:00.000000Z', "
                 "'2030-01-31T10:00:00.000000Z', 'e2', '{}')")
    conn.executemany("INSERT INTO history VALUES (?, ?, ?)",
                     [("a~1:1", i, f'{{"EventType": {i}}}') for i in range(3)])
    conn.commit()
    conn.close()
    out = tmp_path / "seeded.sqlite"
    assert seed_completed(template, out, 5) == 15
    hub = sqlite3.connect(out)
    rows = hub.execute("SELECT instance_id, runtime_status, created_at FROM instances "
                       "ORDER BY created_at DESC").fetchall()
    assert [r[0] for r in rows] == [f"seed{k}-a~1:1" for k in range(5)]
    assert {r[1] for r in rows} == {"Completed"}
    assert rows[0][2] == "2030-01-30T10:00:00.123456Z"  # a day before, same text form
    assert rows[-1][2] == "2030-01-26T10:00:00.123456Z"
    assert hub.execute("SELECT COUNT(*) FROM history WHERE instance_id = 'seed3-a~1:1'"
                       ).fetchone() == (3,)
    hub.close()
    with pytest.raises(ValueError, match="count"):
        seed_completed(template, out, 0)


def test_the_dbos_pipeline_compensates_a_declined_charge(tmp_path):
    pytest.importorskip("dbos")
    from bench.peers import dbos_orders_client
    from tests.demo.test_clients import order

    batches = [ClientBatch("shop-a", (order(1), order(2))), ClientBatch("shop-b", (order(1),))]
    declined = "shop-a~TPCH-2"
    faults = {"payment": {"decline": {declined: {"status": 402, "reason": "card declined"}}}}
    result = dbos_orders_client.run(3, faults, data_root=tmp_path, timeout_s=120,
                                    batches=batches)
    assert (result["orders"], result["processed"], result["error"], result["lost"]) == (
        3, 2, 1, 0)
    assert result["duplicate_effects"] == 0 and result["ok"]
    assert result["latency"]["count"] == 3
    app = sqlite3.connect(tmp_path / "dbos" / "app.sqlite")
    states = dict(app.execute("SELECT key, state FROM states"))
    steps = [r[0] for r in app.execute("SELECT step FROM compensation_log WHERE key = ? "
                                       "ORDER BY rowid", (declined,))]
    replies = dict(app.execute("SELECT key, status FROM replies"))
    app.close()
    assert states == {"shop-a~TPCH-1": "Processed", declined: "Compensated",
                      "shop-b~TPCH-1": "Processed"}
    assert steps == ["reserveInventory", "charge:requested", "refund:done",
                     "releaseInventory"]
    assert replies[declined] == "Compensated"
    with Ledger(tmp_path / "dbos" / "ledger.sqlite") as ledger:
        effects = ledger.effect_counts()
    assert ("payment", "charge", declined) not in effects
    assert effects[("payment", "charge", "shop-a~TPCH-1")] == 1
    assert effects[("shipping", "ship", "shop-b~TPCH-1")] == 1


def _run(faults: str, offered: str, rate: float, p50: float, rss_last: float = 150.0,
         cpu_s: float = 0.0123, trips: tuple[float, float] | None = None) -> dict:
    """One run's figures; ``trips`` (statements, voluntary switches per order): the host's."""
    counted = {} if trips is None else {"statements_per_order": trips[0],
                                        "voluntary_switches_per_order": trips[1]}
    return {"faults": faults, "offered": offered, "orders": 1000, "processed": 990,
            "error": 10, "lost": 0, "orders_per_s": rate,
            "latency": {"count": 1000, "p50_ms": p50, "p95_ms": 2 * p50, "p99_ms": 3 * p50,
                        "max_ms": 4 * p50},
            "host": {"cpu_s_per_order": cpu_s, "peak_rss_mib": 160.4,
                     "rss_mib_by_fifth": [140.0, 150.0, 150.0, 150.0, rss_last], **counted}}


def _orders_section(host_rate: float = 64.0, peer_rate: float = 16.0) -> dict:
    runs = []
    for faults in ("none", "demo default"):
        for offered, p50 in (("full speed", 9000.0), ("10/s", 250.0)):
            runs.append({"faults": faults, "offered": offered,
                         "host": _run(faults, offered, host_rate, p50, trips=(180.4, 210.6)),
                         "peer": _run(faults, offered, peer_rate, 4 * p50, cpu_s=0.0250)})
    return {"n": 1000, "rate": 10.0, "runs": runs,
            "growth": {"instances": 100000, "empty": _run("none", "full speed", 60.0, 1.0),
                       "seeded": _run("none", "full speed", 45.0, 1.0), "ratio": 0.75},
            "tracing": {"on": _run("none", "full speed", 57.0, 1.0),
                        "off": _run("none", "full speed", 60.0, 1.0), "ratio": 0.95}}


def _results(host: float, dbos: float, durabletask: float) -> dict:
    def rates(median: float) -> dict:
        return {"instances_per_s": {"min": median * 0.9, "median": median, "max": median * 1.1},
                "activities_per_s_median": 5 * median, "config": {"peer": "x", "k": "v"}}

    return {
        "machine": {"platform": "Linux", "cpus": 2, "date": "2030-01-01 00:00 UTC",
                    "versions": {"python": "3.11.7"}},
        "command": "make bench", "elapsed_s": 600.0,
        "load": {"start": "0.10 0.20 0.30", "end": "1.00 0.50 0.40", "high": ""},
        "chain5": {"n": 1000, "repetitions": 3,
                   "host": {**rates(host), "config": {"processes": 2}},
                   "host_one_process": rates(host / 2),
                   "peers": {"dbos": rates(dbos), "durabletask": rates(durabletask)}},
        "sqlite_limit": {"full": {"commits_per_s": 2000.0},
                         "normal": {"commits_per_s": 15000.0},
                         "host_work_items_per_s": 11 * host,
                         "host_work_items_fraction_of_full": 11 * host / 2000.0,
                         "host_commits": {"n": 300, "commits": 600, "empty_commits": 50,
                                          "autocommit_writes": 0, "commits_per_instance": 2.0,
                                          "commits_per_activity": 0.4}},
        "replay": {"us_per_handler_call_by_history_length": {"2": 300.0, "6": 400.0},
                   "replay_us_per_chain5_instance": 700.0},
        "orders": _orders_section(),
        "fanout": {"n": 1000, "seconds": {"min": 2.0, "median": 3.0, "max": 4.0},
                   "episodes": 13},
    }


def test_report_goal_is_met_at_four_times_the_better_peer():
    text = report.render(_results(host=120.0, dbos=20.0, durabletask=30.0))
    assert ("**Goal:** local host chain-5 120.0 instances/s vs 4 x Durable Task SDK "
            "(in-memory backend) 30.0 = 120.0: **met** (host / best peer = 4.00).") in text
    assert "| DBOS Transact | 18.0 | 20.0 | 22.0 | 100 | 6.00 |" in text
    assert "| local host (SQLite task hub, `devhost start` defaults: 2 processes) | 108.0 |" \
        in text
    assert "| local host, one process (`--workers 1`) | 54.0 | 60.0 | 66.0 | 300 | 2.00 |" \
        in text
    assert "1320 = **0.66** of the FULL commit rate" in text
    assert ("| local host | demo default | 10/s | 64.0 | 250 | 500 | 750 | 1000 | 12 | 180 | "
            "211 | 160 | 990 | 10 | 0 |") in text
    assert ("| DBOS | none | full speed | 16.0 | 36000 | 72000 | 108000 | 144000 | 25 | n/a | "
            "n/a | 160 |") in text
    assert ("Host CPU per order / DBOS's (no faults, full speed; one pair, host then peer): "
            "0.49; the host's trips per order there: 180 SQL statements and 211 voluntary "
            "context switches") in text
    assert "\norders ratio to peer: 4.00\n" in text
    assert "p50 latency local host / DBOS (no faults, 10/s): 0.25." in text
    assert "no faults: p50_ms=250 p99_ms=750." in text
    assert "45.0 orders/s vs 60.0 on an empty hub (back to back): **0.75**" in text
    assert "full speed, back to back: 57.0 vs 60.0 orders/s: **0.95** (overhead 5%)." in text
    assert ("Goals: >= 2 x the peer's orders/s: **met**; host CPU per order <= 0.6 x the "
            "peer's: **met**; host SQL statements per order < 200: **met**; host voluntary "
            "context switches per order < 200: **not met**; p99 <= 300 ms at 10/s: "
            "**not met**; large hub >= 0.8 of the empty hub's orders/s: **not met**; peak "
            "RSS < 256 MiB: **met**.") in text
    assert "Note:" not in text


def test_the_large_hub_is_compared_in_interleaved_pairs_and_judged_by_the_median(
        monkeypatch, tmp_path):
    called = []

    def fake_run(n, faults, *, data_root, task_hub_from=None, **kwargs):
        called.append("seeded" if task_hub_from else "empty")
        rate = {2: 50.0, 4: 30.0, 6: 44.0}.get(len(called), 40.0)  # the seeded runs
        return _run("none", "full speed", rate, 1.0)

    monkeypatch.setattr(orders, "run", fake_run)
    growth = orders._growth_pairs(1000, tmp_path / "hub.sqlite", 100_000, tmp_path,
                                  lambda line: None)
    assert called == ["empty", "seeded"] * orders.GROWTH_PAIRS
    assert [round(p["ratio"], 2) for p in growth["pairs"]] == [1.25, 0.75, 1.1]
    assert growth["ratio"] == 1.1 and growth["seeded"]["orders_per_s"] == 44.0
    results = _results(host=120.0, dbos=20.0, durabletask=30.0)
    results["orders"]["growth"] = {"instances": 100_000, **growth}
    text = report.render(results)
    assert ("44.0 orders/s vs 40.0 on an empty hub (the median of 3 interleaved pairs, "
            "empty then seeded; ratios 1.25, 0.75, 1.10): **1.10**") in text
    assert "large hub >= 0.8 of the empty hub's orders/s: **met**" in text


def test_the_ratio_to_the_peer_is_taken_in_interleaved_pairs_and_judged_by_the_median(
        monkeypatch, tmp_path):
    called = []
    host_rates, peer_rates = iter([30.0, 33.0, 29.0]), iter([25.0, 22.0, 31.0])
    # CPU s per order: pair ratios 0.5, 0.7, 0.625; the median orders/s pair (the first)
    # alone would say 0.5.
    host_cpu, peer_cpu = iter([0.010, 0.014, 0.015]), iter([0.020, 0.020, 0.024])

    def fake_run(n, faults, *, data_root, **kwargs):
        called.append("host")
        (data_root / "demo").mkdir(parents=True, exist_ok=True)
        (data_root / "demo" / "taskhub.sqlite").write_text(f"hub {len(called)}")
        return _run("none", "full speed", next(host_rates), 9000.0, cpu_s=next(host_cpu))

    def fake_peer(n, faults, rate, data_root):
        called.append("peer")
        return _run("none", "full speed", next(peer_rates), 9000.0, cpu_s=next(peer_cpu))

    monkeypatch.setattr(orders, "run", fake_run)
    monkeypatch.setattr(orders, "run_peer", fake_peer)
    template = tmp_path / "template.sqlite"
    full = orders._peer_pairs(1000, tmp_path, template, lambda line: None)
    assert called == ["host", "peer"] * orders.PEER_PAIRS
    assert template.read_text() == "hub 1"  # the first host run's hub seeds the large one
    assert [round(p["ratio"], 2) for p in full["pairs"]] == [1.2, 1.5, 0.94]
    assert [round(p["cpu_ratio"], 3) for p in full["pairs"]] == [0.5, 0.7, 0.625]
    assert [p["host_cpu_ms_per_order"] for p in full["pairs"]] == [10.0, 14.0, 15.0]
    assert (full["host"]["orders_per_s"], full["peer"]["orders_per_s"]) == (30.0, 25.0)
    results = _results(host=120.0, dbos=20.0, durabletask=30.0)
    results["orders"]["runs"][0] = full
    text = report.render(results)
    assert "\norders ratio to peer: 1.20\n" in text
    assert ("(no faults, full speed; the median of 3 interleaved pairs, host then peer; ratios "
            "1.20, 1.50, 0.94; the table's rows are the median pair's): 1.20;") in text
    assert ">= 2 x the peer's orders/s: **not met**" in text
    assert ("- Host CPU per order / DBOS's (no faults, full speed; the median of 3 interleaved"
            " pairs, host then peer; ratios 0.50, 0.70, 0.62): 0.62;") in text
    assert "host CPU per order <= 0.6 x the peer's: **not met**" in text


def test_results_without_cpu_figures_per_pair_judge_cpu_by_the_median_orders_pair():
    # results.json files written before the pairs carried CPU figures still render.
    results = _results(host=120.0, dbos=20.0, durabletask=30.0)
    full = results["orders"]["runs"][0]
    full["pairs"] = [{"host_orders_per_s": 64.0, "peer_orders_per_s": 16.0, "ratio": 4.0},
                     {"host_orders_per_s": 60.0, "peer_orders_per_s": 20.0, "ratio": 3.0},
                     {"host_orders_per_s": 70.0, "peer_orders_per_s": 14.0, "ratio": 5.0}]
    full["host"]["host"]["cpu_s_per_order"] = 0.0140  # the median pair's: the peer's 0.0250
    text = report.render(results)
    assert ("- Host CPU per order / DBOS's (no faults, full speed; the pair with the median "
            "orders/s ratio): 0.56;") in text
    assert "host CPU per order <= 0.6 x the peer's: **met**" in text


@pytest.mark.parametrize("host_cpu_s, met", [(0.0150, "met"), (0.0151, "not met")])
def test_report_cpu_goal_is_a_ratio_to_the_peer_s_cpu_per_order(host_cpu_s, met):
    results = _results(host=120.0, dbos=20.0, durabletask=30.0)
    for run in results["orders"]["runs"]:
        run["host"]["host"]["cpu_s_per_order"] = host_cpu_s  # the peer's: 0.0250
    assert f"host CPU per order <= 0.6 x the peer's: **{met}**" in report.render(results)


def test_report_trip_goals_are_not_met_when_the_host_did_not_count():
    results = _results(host=120.0, dbos=20.0, durabletask=30.0)
    for run in results["orders"]["runs"]:
        for key in ("statements_per_order", "voluntary_switches_per_order"):
            del run["host"]["host"][key]
    text = report.render(results)
    assert "host SQL statements per order < 200: **not met**" in text
    assert "host voluntary context switches per order < 200: **not met**" in text


def test_report_goal_is_not_met_below_four_times_the_better_peer_and_flags_load():
    results = _results(host=119.9, dbos=30.0, durabletask=10.0)
    results["load"]["high"] = "4.0 at start on 2 CPUs"
    text = report.render(results)
    assert "= 120.0: **not met** (host / best peer = 4.00)" in text
    assert "vs 4 x DBOS Transact 30.0" in text
    assert "the load average was high (4.0 at start on 2 CPUs)" in text


def test_the_orders_section_alone_renders_without_the_other_sections():
    results = _results(host=60.0, dbos=20.0, durabletask=30.0)
    only = {k: results[k] for k in ("machine", "command", "elapsed_s", "load", "orders")}
    only["orders"] = _orders_section(host_rate=20.0, peer_rate=16.0)
    text = report.render(only)
    assert "## 1. Chain-5" not in text and "## 5. Fan-out" not in text
    assert "\norders ratio to peer: 1.25\n" in text
    assert ">= 2 x the peer's orders/s: **not met**" in text


def test_high_load_is_reported_when_the_one_minute_average_reaches_the_cpus():
    assert bench_main.high_load("0.50 1 1", "1.90 1 1", 2) == ""
    assert bench_main.high_load("2.00 1 1", "3.50 1 1", 2) == "2.0 at start, 3.5 at end on 2 CPUs"
    assert bench_main.high_load("n/a", "n/a", 2) == ""


def test_bench_exits_with_the_install_command_when_peers_are_missing(monkeypatch):
    monkeypatch.setattr(bench_main, "missing_peers", lambda: ["dbos", "durabletask"])
    monkeypatch.setattr(sys, "argv", ["bench"])
    with pytest.raises(SystemExit) as exc:
        bench_main.main()
    message = str(exc.value.code)
    assert "peer packages not installed: dbos, durabletask" in message
    assert "pip install 'dbos==3.4.0' 'durabletask==1.12.0'" in message


def test_bench_rejects_a_non_positive_count(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["bench", "--n", "0"])
    with pytest.raises(SystemExit):
        bench_main.main()
    assert "--n: must be at least 1" in capsys.readouterr().err


def _cut_run(actions: float, episodes: float, bus: float, ru: float, usd: float) -> dict:
    return {"per_order": {"taskhub": {"dts_actions": actions, "episodes": episodes,
                                      "activities": actions / 3},
                          "servicebus": {"operations": bus}, "stores": {"ru": ru},
                          "usd_per_1000": {"total": usd}},
            "processed": {"dts_actions": actions - 1}, "outcomes": {"processed": 200}}


@pytest.mark.parametrize(("now", "verdict", "change"), [(15.6, "met", "-40%"),
                                                        (18.5, "not met", "-29%")])
def test_the_cut_in_durable_actions_is_a_goal_against_workflow_version_1(now, verdict, change):
    results = _results(host=120.0, dbos=20.0, durabletask=30.0)
    results["orders"]["count_cut"] = {
        "n": 200, "rate": 10.0, "baseline_version": "1",
        "baseline": _cut_run(26.0, 13.0, 21.0, 145.0, 0.128),
        "current": _cut_run(now, 8.0, 21.0, 147.0, 0.098)}
    text = report.render(results)
    assert (f"durable actions per fault-free order cut >= 30% against workflow version 1: "
            f"**{verdict}**") in text
    assert f"| Durable Task Scheduler actions | 26.00 | {now:.2f} | {change} |" in text
    assert "| Service Bus operations | 21.00 | 21.00 | +0% |" in text
    assert "| $ per 1,000 orders | 0.1280 | 0.0980 | -23% |" in text
    assert "one processed attempt: 25 against" in text
