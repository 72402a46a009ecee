"""``python -m bench`` (``make bench``): run the benchmarks, write bench/RESULTS.md + JSON."""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from bench import chain5, replay

OUT = Path(__file__).parent


def machine() -> dict[str, str]:
    """Describe the machine and the versions the figures were measured with."""
    import os

    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": str(os.cpu_count()), "sqlite": sqlite3.sqlite_version,
            "azure-functions-durable": version("azure-functions-durable"),
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


def main() -> None:
    """Run all benchmarks and write the results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="chain-5 instances per run")
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    results = {"machine": machine(), "command": "make bench",
               "chain5": chain5.run(args.n, args.repetitions), "replay": replay.run()}
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    c5, rp = results["chain5"], results["replay"]
    lines = [
        "# Benchmark results", "",
        f"Command: `{results['command']}`. Machine: {results['machine']['cpus']} CPUs, "
        f"{results['machine']['platform']}, Python {results['machine']['python']}, SQLite "
        f"{results['machine']['sqlite']}, azure-functions-durable "
        f"{results['machine']['azure-functions-durable']}; {results['machine']['date']}.", "",
        f"## Chain-5 on one host process ({c5['n']} instances x {c5['repetitions']})", "",
        "| | min | median | max |", "|---|---:|---:|---:|",
        "| instances/s | {min:.1f} | {median:.1f} | {max:.1f} |".format(**c5["instances_per_s"]),
        f"| activities/s (median) | | {c5['activities_per_s_median']:.1f} | |", "",
        "## SDK replay cost", "", "| history events | us per handler call |", "|---:|---:|",
        *[f"| {k} | {v:.0f} |" for k, v in rp["us_per_handler_call_by_history_length"].items()],
        "", f"Replay cost per chain-5 instance (all 6 episodes): "
            f"{rp['replay_us_per_chain5_instance'] / 1000:.1f} ms.", ""]
    (OUT / "RESULTS.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
