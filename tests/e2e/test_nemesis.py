"""A short nemesis run: random, combined faults from a fixed seed, and still every order balances.

``python -m demo --nemesis 2 --orders 150`` (demo/nemesis.py): the host, a worker and the
simulator SIGKILLed and SIGSTOPped past the leases, latency past the call timeout with the
effect performed late, transient bursts, black holes with and without the effect, the
host processes' clocks a few seconds apart, and, where the run can mount a tmpfs for the
host's data (root), that disk filled and freed. The run must end as every demo does, and
neither the host nor the simulator may exit by itself. Seed 2 SIGKILLs the host while the
disk is full: a host that cannot start on a full disk (it exited, writing its settings
file) is such a crash. 150 orders draw the same kinds as 300 (and that kill) in a shorter
schedule (demo/nemesis_run.py ``HORIZON_PER_ORDER_S``).
"""

import re
import subprocess
import sys

import pytest

from demo.stage import REPO

pytestmark = [pytest.mark.slow(expected_s=60), pytest.mark.timeout(600)]
ORDERS = 150
SEED = 2


def test_nemesis_run_ends_all_terminal_balanced_without_loss_or_duplicates(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "demo", "--nemesis", str(SEED), "--orders", str(ORDERS),
         "--data-dir", str(tmp_path), "--timeout-s", "480"],
        cwd=REPO, capture_output=True, text=True, timeout=580)
    out = done.stdout
    tail = out[-4000:] + done.stderr[-3000:]
    kinds = set(re.findall(rf"^nemesis {SEED}: t\+ *[\d.]+s (\w+)", out, re.MULTILINE))
    assert {"kill", "pause", "latency", "transient", "black_hole"} <= kinds, tail
    assert "disk_full" in kinds or "disk_full skipped" in out, tail
    assert f"nemesis {SEED}: clocks: host" in out, tail
    assert f"nemesis {SEED}: crashes:" not in out, tail
    line = [x for x in out.splitlines() if x.startswith("summary:")]
    assert line, tail
    fields = dict(re.findall(r"(\w+)=([\d.]+)", line[0]))
    assert fields["orders"] == str(ORDERS)
    assert int(fields["processed"]) + int(fields["error"]) == ORDERS, line[0]
    unbalanced = [x for x in out.splitlines() if x.startswith(("unbalanced ", "stock unb"))]
    assert (fields["lost"], fields["duplicate_effects"], fields["unbalanced"],
            fields["stock_unbalanced"]) == ("0", "0", "0", "0"), "\n".join(unbalanced)
    assert done.returncode == 0, tail
