"""A small chaos run of the demo: crashes and black holes, and still every order balances.

The real processes as ``make demo`` runs them (demo/processes.py): the host SIGKILLed
twice at different progress points, the simulator SIGKILLed once and restarted (its
ledger is a SQLite file and survives), and a few orders whose every payment request is
black-holed with the charge performed (demo/faults.py ``chaos_faults``), so each of them
is charged and never hears so: it can only give up and be compensated, and compensation
must then undo that charge. The stock balances too (``stock_unbalanced=0``): every SKU
gave exactly the Processed orders' lines, whatever the crashes interrupted. ``--chaos``
also shortens deadlines so they give up in about 25 s (demo/run.py ``CHAOS_SETTINGS``).
"""

import json
import re
import subprocess
import sys

import pytest

from demo.stage import REPO

pytestmark = [pytest.mark.slow(expected_s=45), pytest.mark.timeout(300)]
ORDERS = 36


def test_chaos_run_ends_all_terminal_balanced_without_loss_or_duplicates(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "demo", "--orders", str(ORDERS), "--chaos",
         "--kill-at", "0.2", "--kill-at", "0.55", "--kill-simulator-at", "0.4",
         "--data-dir", str(tmp_path), "--timeout-s", "240"],
        cwd=REPO, capture_output=True, text=True, timeout=280)
    out = done.stdout
    black_holed = json.loads((tmp_path / "demo" / "faults.json").read_text())[
        "payment"]["black_hole_order_ids"]
    assert len(black_holed) >= 2, black_holed
    assert out.count("host SIGKILLed at") == 2, out[-3000:]
    assert out.count("simulator SIGKILLed at") == 1, out[-3000:]
    line = [x for x in out.splitlines() if x.startswith("summary:")]
    assert line, out[-3000:] + done.stderr[-3000:]
    fields = dict(re.findall(r"(\w+)=([\d.]+)", line[0]))
    assert fields["orders"] == str(ORDERS)
    assert fields["lost"] == "0" and fields["duplicate_effects"] == "0", line[0]
    assert int(fields["processed"]) + int(fields["error"]) == ORDERS, line[0]
    unbalanced = [x for x in out.splitlines() if x.startswith("unbalanced ")]
    assert fields["unbalanced"] == "0", (
        f"black-holed orders {black_holed}; audit:\n" + "\n".join(unbalanced))
    stock = [x for x in out.splitlines() if x.startswith("stock unbalanced ")]
    assert fields["stock_unbalanced"] == "0", "\n".join(stock)
    assert "out_of_stock" in fields, line[0]
    assert done.returncode == 0, out[-3000:]
