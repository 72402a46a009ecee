"""The nemesis schedule (demo/nemesis.py): drawn from the seed alone, every kind of fault."""

from demo.nemesis import KINDS, PAUSE_S, SKEW_S, Fault, faults_in_force, plan

KEYS = [f"shop-a~TPCH-{n}" for n in range(1, 61)]


def test_a_seed_gives_the_same_schedule_and_another_seed_another():
    assert plan(7, KEYS, 60).lines() == plan(7, KEYS, 60).lines()
    assert plan(7, KEYS, 60).lines() != plan(8, KEYS, 60).lines()


def test_every_kind_is_drawn_within_the_horizon_with_pauses_past_the_leases():
    schedule = plan(1, KEYS, 60)
    assert {f.kind for f in schedule.faults} == set(KINDS)
    assert all(1.0 <= f.at_s <= 60 for f in schedule.faults)
    assert [f.at_s for f in schedule.faults] == sorted(f.at_s for f in schedule.faults)
    pauses = [f.for_s for f in schedule.faults if f.kind == "pause"]
    assert pauses and all(PAUSE_S[0] <= s <= PAUSE_S[1] for s in pauses)
    offsets = [schedule.host_offset_s, *schedule.worker_offsets_s]
    assert all(abs(o) <= SKEW_S for o in offsets) and len(set(offsets)) > 1


def test_without_a_file_system_of_its_own_no_disk_fault_is_drawn():
    assert "disk_full" not in {f.kind for f in plan(1, KEYS, 120, disk=False).faults}


def test_faults_in_force_put_the_network_faults_over_the_base():
    base = {"seed": 3, "all": {"transient_rate": 0.1},
            "payment": {"decline": {"k1": {"status": 402, "reason": "no"}}},
            "shipping": {"outage_for_s": 5}}
    doc = faults_in_force(base, [
        Fault(1, "latency", "payment", 3, {"latency_s": 2.5}),
        Fault(2, "black_hole", "payment", 3, {"orders": "k2,k3", "effect": True}),
        Fault(3, "transient", "shipping", 3, {"rate": 0.7})])
    assert doc["seed"] == 3
    assert doc["payment"] == {"transient_rate": 0.1, "latency_s": 2.5,
                              "decline": {"k1": {"status": 402, "reason": "no"}},
                              "black_hole_order_ids": ["k2", "k3"],
                              "black_hole_performs_effect": True}
    # The start-up outage is the base's once only: it is not posted again.
    assert doc["shipping"] == {"transient_rate": 0.7}


def test_the_longest_stall_counts_from_the_start_to_each_final_status():
    from datetime import UTC, datetime, timedelta

    from demo.nemesis_run import longest_stall

    began = datetime(2030, 1, 1, tzinfo=UTC)
    heard = [began + timedelta(seconds=s) for s in (30.0, 2.0, 41.5, 3.0)]
    assert longest_stall(began, heard) == (27.0, 3.0)
    assert longest_stall(began, []) == (0.0, 0.0)


class FakeProcess:
    """A demo process whose OS process has exited with ``code`` (None: still running)."""

    def __init__(self, name, code):
        self.name, self.exited_at_start, self.starts = name, False, 0
        self.proc = type("Popen", (), {"returncode": code, "poll": lambda _self: code})()

    def start(self, timeout_s, wait=True):
        self.starts += 1


def test_a_process_that_exited_by_itself_is_a_crash_and_is_started_again(tmp_path):
    from demo.nemesis import Nemesis

    host, sim, said = FakeProcess("local host", 1), FakeProcess("simulator", None), []
    chaos = Nemesis(plan(1, KEYS, 10), host, sim, "http://127.0.0.1:9", {}, tmp_path,
                    disk=False, say=said.append)
    chaos._ensure_up()
    assert chaos.crashes == ["local host exited by itself (exit code 1)"]
    assert (host.starts, sim.starts) == (1, 0)
    assert said == ["nemesis: local host exited by itself (exit code 1): a crash; "
                    "starting it again"]
