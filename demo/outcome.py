"""How a demo run ends: watching the clients' reply queues, the report, the exit code."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from client.watch import WatchResult
from demo import latency, processes
from demo.clients import ClientBatch, rejected_keys, watch_all
from demo.stage import console
from demo.summary import Summary, read_records, summarize
from orders.models import ProcessState


def exit_unless_ok(summary: Summary) -> None:
    """Exit 1, saying so, unless every order ended terminal and balanced."""
    if not summary.ok:
        console.print("[red]demo failed: an order was lost, left non-terminal, had a side "
                      "effect twice, or is unbalanced in the ledger or the stock[/red]")
        raise typer.Exit(1)


def report(data_dir: Path, batches: list[ClientBatch], heard: dict[str, WatchResult],
            elapsed: float) -> Summary:
    """Print the unbalanced orders, one line per client, then the run's summary line."""
    keys = [k for b in batches for k in b.keys]
    rejected = set().union(*(rejected_keys(b, heard.get(b.client_id)) for b in batches))
    records = read_records(data_dir, keys)
    summary = summarize(records, keys, rejected, elapsed)
    summary.latency = latency.measure(data_dir, batches, heard)
    for line in summary.unbalanced_lines():
        print(line, flush=True)
    for batch in batches:
        mine = summarize(records, batch.keys, rejected, elapsed, whole_run=False)
        print(mine.client_line(batch.client_id, heard.get(batch.client_id),
                               {o.order_id for o in batch.orders}), flush=True)
    print(summary.line(), flush=True)
    hint = trace_hint(data_dir, records.states)
    if hint:
        console.print(hint, highlight=False, soft_wrap=True)
    return summary


def trace_hint(data_dir: Path, states: dict[str, Any]) -> str | None:
    """Return the command showing the trace (X8) of a recovered, else compensated, else any."""
    def rank(item: tuple[str, Any]) -> int:
        record = item[1]
        if record.process_state == ProcessState.PROCESSED and record.attempt > 1:
            return 0
        return 1 if record.process_state == ProcessState.COMPENSATED else 2

    present = sorted(((k, r) for k, r in states.items() if r is not None), key=rank)
    if not present:
        return None
    key, how = present[0][0], ("recovered", "compensated", "")[rank(present[0])]
    client_id, _, order_id = key.partition("~")
    where = data_dir.relative_to(Path.cwd()) if data_dir.is_relative_to(Path.cwd()) \
        else data_dir
    return (f"demo: the trace of {how + ' ' if how else ''}order {order_id} of client "
            f"{client_id}: .venv/bin/python -m opscli --data-dir {where} trace {order_id} "
            f"--client {client_id}")


def watch(data_dir: Path, batches: list[ClientBatch],
           crashes: list[tuple[float, str, processes.Process]],
           timeout_s: float) -> dict[str, WatchResult]:
    """Watch every client's reply queue; SIGKILL and restart each process of ``crashes``.

    ``crashes`` holds ``(fraction, name, process)``: the process is killed once that
    fraction of all orders is terminal, in fraction order. Kills and restarts happen in
    this (the main) thread, never in a client's watcher thread: see
    :func:`demo.clients.watch_all`.
    """
    expect = sum(len(b.orders) for b in batches)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    due = sorted(crashes, key=lambda c: c[0])
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("orders terminal", total=expect)

        def show(terminal: int) -> None:
            progress.update(task, completed=terminal)
            while due and terminal >= due[0][0] * expect:
                _, name, proc = due.pop(0)
                proc.kill()
                progress.console.print(f"demo: {name} SIGKILLed at {terminal}/{expect}"
                                       f" orders terminal; restarting it")
                proc.start()

        return watch_all(data_dir, batches, timedelta(seconds=timeout_s), show)
