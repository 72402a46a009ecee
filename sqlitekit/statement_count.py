"""Count the SQL statements a process runs, per SQLite file, for the benchmark's figures.

Off unless :data:`COUNT_SETTING` names a folder (the benchmark sets it for the host's
processes). Then every :func:`sqlitekit.connect` connection gets a trace callback (SQLite's
``sqlite3_trace``: one call per statement run, BEGIN and COMMIT and each row of an
``executemany`` included, as ``bench.statements`` counts), and the process writes to
``<folder>/<pid>.json`` each :data:`WRITE_EVERY_S` and at exit (so a reader after the
process ends, or one that killed it, loses at most that interval) its statements by file
name and its context switches, voluntary and involuntary, from ``getrusage``: those of all
its threads, ended ones included (``/proc/<pid>/status``, which psutil reads, has the
main thread's only). Each statement lets go of the interpreter lock, so with the switches
they are the process's trips.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import resource
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

COUNT_SETTING = "SQLITEKIT_STATEMENT_COUNTS"
"""Environment variable: the folder each process writes its statement counts to."""

KINDS_SETTING = "SQLITEKIT_STATEMENT_KINDS"
"""Environment variable: when set (to anything), the counts are kept per statement kind
too (its text with literals replaced by ``?``, under ``"kinds"``), to see which
statements the trips are. Costs a regular expression per statement: not for timed runs."""

_LITERALS = re.compile(r"'(?:[^']|'')*'|X'[0-9A-Fa-f]*'|\b\d+(?:\.\d+)?\b")

WRITE_EVERY_S = 0.5
"""How often a counting process rewrites its file."""


_thread_seen: dict[int, tuple[str, int]] = {}


def thread_switches() -> dict[str, int]:
    """Voluntary context switches of this process's threads, by thread name.

    Read from ``/proc/self/task/<id>/status`` (Linux; empty elsewhere) for the live threads,
    with the last count read of each ended one (each write reads them: an ended thread's
    switches after the last write are missed); names with their digits dropped
    (``Thread-12`` and ``Thread-13`` add up under ``Thread-``).
    """
    for thread in threading.enumerate():
        try:
            status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:") and thread.native_id is not None:
                _thread_seen[thread.native_id] = (re.sub(r"\d+", "", thread.name),
                                                  int(line.split()[1]))
    found: Counter[str] = Counter()
    for name, count in _thread_seen.values():
        found[name] += count
    return dict(found)


class StatementCounts:
    """Statements per file name of this process, written to ``folder/<pid>.json``."""

    def __init__(self, folder: Path, kinds: bool = False) -> None:
        self.folder = folder
        self.by_file: Counter[str] = Counter()
        self.by_kind: Counter[str] | None = Counter() if kinds else None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        folder.mkdir(parents=True, exist_ok=True)
        threading.Thread(target=self._write_often, name="statement-counts",
                         daemon=True).start()
        atexit.register(self.write)

    def trace(self, conn: sqlite3.Connection, path: str | Path) -> None:
        """Count each statement ``conn`` runs under ``path``'s file name."""
        name = Path(path).name
        by_file, by_kind, lock = self.by_file, self.by_kind, self._lock

        def count(_statement: str) -> None:
            with lock:
                by_file[name] += 1

        def count_kind(statement: str) -> None:
            kind = name + ": " + " ".join(_LITERALS.sub("?", statement[:400]).split())
            with lock:
                by_file[name] += 1
                by_kind[kind] += 1  # type: ignore[index]

        conn.set_trace_callback(count if by_kind is None else count_kind)

    def write(self) -> None:
        """Write the counts so far (atomically: a reader never sees half a file)."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with self._lock:
            text = json.dumps({"statements": dict(self.by_file), "context_switches": {
                "voluntary": usage.ru_nvcsw, "involuntary": usage.ru_nivcsw},
                **({} if self.by_kind is None else {"kinds": dict(self.by_kind),
                                                    "threads": thread_switches()})})
        target = self.folder / f"{os.getpid()}.json"
        partial = target.with_suffix(".tmp")
        partial.write_text(text)
        partial.replace(target)

    def _write_often(self) -> None:
        while not self._stop.wait(WRITE_EVERY_S):
            self.write()


_counts: StatementCounts | None = None
_guard = threading.Lock()


def counter(environ: Mapping[str, str] = os.environ) -> StatementCounts | None:
    """Return this process's counter if :data:`COUNT_SETTING` is set, else None."""
    global _counts
    folder = environ.get(COUNT_SETTING)
    if not folder:
        return None
    with _guard:
        if _counts is None or _counts.folder != Path(folder):
            _counts = StatementCounts(Path(folder), kinds=bool(environ.get(KINDS_SETTING)))
        return _counts


def read_counts(folder: Path, pids: Callable[[int], bool] = lambda pid: True
                ) -> tuple[dict[str, int], dict[str, int]]:
    """Sum the files of ``folder`` whose process id ``pids`` accepts.

    Returns
    -------
    (dict, dict)
        Statements per SQLite file name, and context switches (``voluntary``,
        ``involuntary``), of those processes together.
    """
    statements: Counter[str] = Counter()
    switches: Counter[str] = Counter()
    for path in folder.glob("*.json"):
        if path.stem.isdigit() and pids(int(path.stem)):
            counts = json.loads(path.read_text())
            statements.update(counts["statements"])
            switches.update(counts["context_switches"])
    return dict(statements), dict(switches)
