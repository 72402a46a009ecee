"""Recorded orders replayed episode by episode: the SDK handler's outputs stay byte-identical.

``data/recorded_orders.json`` holds three fault-free orders of a demo run (version 3), each
with every episode's handler output as the code before the replay memos produced it: the
actions, custom status and output the host commits. Any change to the orchestrators, the
contracts or the memos must reproduce them exactly, replay after replay.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bench import replay_orders
from devhost.app.loader import load_app
from devhost.orchestration import sdk_fastpaths

Orders = list[dict[str, Any]]
Handlers = dict[str, Any]
DATA = Path(__file__).parent / "data" / "recorded_orders.json"


@pytest.fixture(scope="module")
def recorded() -> Orders:
    return json.loads(DATA.read_text())


@pytest.fixture(scope="module")
def handlers() -> Handlers:
    sdk_fastpaths.install()
    _, index = load_app(replay_orders.APP_DIR)
    return {name: f.func for name, f in index.orchestrators.items()}


def as_recorded(order: dict[str, Any]) -> replay_orders.Recorded:
    return replay_orders.Recorded(order["instance_id"], order["name"], tuple(order["history"]))


def test_every_episode_replays_to_the_recorded_output_three_times_over(
        recorded: Orders, handlers: Handlers) -> None:
    # Three rounds: the first fills the memos, the later ones read them.
    for _ in range(3):
        for order in recorded:
            bodies = replay_orders.episode_bodies(as_recorded(order))
            assert len(bodies) == len(order["outputs"]) == 8
            outputs = [handlers[order["name"]](body) for body in bodies]
            assert outputs == order["outputs"]


def test_the_last_episode_completes_the_order(recorded: Orders, handlers: Handlers) -> None:
    last = json.loads(recorded[0]["outputs"][-1])
    assert last["isDone"] is True
    assert last["output"] == {"outcome": "processed"}


def test_episode_bodies_cut_the_history_at_each_orchestrator_started(recorded: Orders) -> None:
    order = recorded[0]
    bodies = [json.loads(b) for b in replay_orders.episode_bodies(as_recorded(order))]
    started = [i for i, t in enumerate(order["history"]) if '"EventType": 12,' in t]
    for body, start in zip(bodies, started, strict=True):
        old = [e for e in body["history"] if e["IsPlayed"]]
        new = [e for e in body["history"] if not e["IsPlayed"]]
        assert [json.dumps(e) for e in old] == order["history"][:start]
        assert new[0]["EventType"] == 12
        assert body["isReplaying"] is (start > 0)
    # The input as the host sends it: the JSON value of the stored Input (here a JSON text).
    assert json.loads(bodies[0]["input"])["orderId"] == order["instance_id"].rsplit(":", 1)[0]


def test_measure_reads_a_task_hub_and_checks_every_run(recorded: Orders, tmp_path: Path) -> None:
    hub = tmp_path / "taskhub.sqlite"
    conn = sqlite3.connect(hub)
    conn.executescript("CREATE TABLE instances (instance_id TEXT, name TEXT);"
                       "CREATE TABLE history (instance_id TEXT, position INT, event TEXT);")
    for order in recorded:
        conn.execute("INSERT INTO instances VALUES (?, ?)", (order["instance_id"], order["name"]))
        conn.executemany("INSERT INTO history VALUES (?, ?, ?)",
                         [(order["instance_id"], i, t) for i, t in enumerate(order["history"])])
    conn.commit()
    conn.close()
    result = replay_orders.measure(hub, runs=2)
    assert result["instances"] == 3 and result["episodes"] == 24
    assert result["cpu_ms_per_order"] == min(result["cpu_ms_per_order_runs"]) > 0
    assert result["outputs"] == [o for order in recorded for o in order["outputs"]]
