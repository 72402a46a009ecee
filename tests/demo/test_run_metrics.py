"""The host's figures of a demo run: CPU and memory always, trips when the host counted."""

import json

from demo.resources import HostUsage
from demo.run import counting_env, run_metrics_host
from sqlitekit.statement_count import COUNT_SETTING


def test_the_host_s_processes_trips_are_summed_per_order_and_others_left_out(tmp_path):
    usage = HostUsage(cpu_s={101: 3.0, 102: 1.0}, rss=[(0.1, 100 * 2**20)])
    files = {101: ({"taskhub.sqlite": 300, "servicebus.sqlite": 100}, (900, 40)),
             102: ({"taskhub.sqlite": 100}, (100, 10)),
             999: ({"ledger.sqlite": 5000}, (7000, 7))}  # not the host's: the simulator
    for pid, (statements, (voluntary, involuntary)) in files.items():
        (tmp_path / f"{pid}.json").write_text(json.dumps({
            "statements": statements,
            "context_switches": {"voluntary": voluntary, "involuntary": involuntary}}))
    figures = run_metrics_host(usage, 4, tmp_path)
    assert figures["cpu_s_per_order"] == 1.0
    assert figures["statements_per_order"] == 125.0
    assert figures["statements_per_order_by_file"] == {"servicebus.sqlite": 25.0,
                                                       "taskhub.sqlite": 100.0}
    assert (figures["voluntary_switches_per_order"],
            figures["involuntary_switches_per_order"]) == (250.0, 12.5)


def test_without_a_count_there_are_no_trip_figures_and_no_setting(tmp_path):
    figures = run_metrics_host(HostUsage(cpu_s={1: 2.0}), 2)
    assert "statements_per_order" not in figures and figures["cpu_s_per_order"] == 1.0
    assert counting_env(None) == {}
    assert counting_env(tmp_path) == {COUNT_SETTING: str(tmp_path)}
