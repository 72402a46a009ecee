"""Count the SQL statements a process runs, per SQLite file, for the benchmark's figures.

Off unless :data:`COUNT_SETTING` names a folder (the benchmark sets it for the host's
processes). Then every :func:`sqlitekit.connect` connection counts the statements it runs
(BEGIN and COMMIT and each row of an ``executemany`` included, as ``bench.statements``
counts with SQLite's trace callback) in Python, in :class:`CountedConnection` and
:class:`CountedCursor`: a trace callback would take the interpreter lock back inside every
statement, a switch more per statement that the benchmark would measure as the host's own
(docs/performance.md, "The statement count without a trace callback"). The process writes to
``<folder>/<pid>.json`` each :data:`WRITE_EVERY_S` and at exit (so a reader after the
process ends, or one that killed it, loses at most that interval) its statements by file
name and its context switches, voluntary and involuntary, from ``getrusage``: those of all
its threads, ended ones included (``/proc/<pid>/status``, which psutil reads, has the
main thread's only). Each statement lets go of the interpreter lock, so with the switches
they are the process's trips.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import resource
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Self

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

    @property
    def in_python(self) -> bool:
        """Whether a :class:`CountedConnection` counts (else the trace callback: kinds kept)."""
        return self.by_kind is None

    def trace(self, conn: sqlite3.Connection, path: str | Path) -> None:
        """Count each statement ``conn`` runs under ``path``'s file name.

        A :class:`CountedConnection` counts in Python; with kinds kept, or for another
        connection class, SQLite's trace callback counts (and names the kind).
        """
        name = Path(path).name
        by_file, by_kind, lock = self.by_file, self.by_kind, self._lock

        def add(n: int) -> None:
            with lock:
                by_file[name] += n

        def count_kind(statement: str) -> None:
            kind = name + ": " + " ".join(_LITERALS.sub("?", statement[:400]).split())
            with lock:
                by_file[name] += 1
                by_kind[kind] += 1  # type: ignore[index]

        if by_kind is None and isinstance(conn, CountedConnection):
            conn.tally = add
        else:
            conn.set_trace_callback(count_kind if by_kind is not None
                                    else lambda _statement: add(1))

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


def _no_tally(_n: int) -> None:
    """Count nothing: a connection's tally until :meth:`StatementCounts.trace` sets one."""


def _counted_rows(rows: Iterable[Any], tally: Callable[[int], None]) -> Iterator[Any]:
    """Yield ``rows``, counting each as SQLite takes it (a row is one statement run)."""
    for row in rows:
        tally(1)
        yield row


@contextlib.contextmanager
def _traced(conn: sqlite3.Connection) -> Iterator[None]:
    """Count the statements ``conn`` runs inside the block with SQLite's trace callback."""
    tally = conn.tally  # type: ignore[attr-defined]
    conn.set_trace_callback(lambda _statement: tally(1))
    try:
        yield
    finally:
        conn.set_trace_callback(None)


class CountedCursor(sqlite3.Cursor):
    """A cursor counting its statements into its :class:`CountedConnection`'s tally."""

    def execute(self, sql: str, parameters: Any = (), /) -> Self:
        """Count one statement, then run it as ``sqlite3.Cursor.execute``."""
        self.connection.tally(1)  # type: ignore[attr-defined]
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Self:
        """Run as ``sqlite3.Cursor.executemany``, one count per row SQLite takes."""
        return super().executemany(sql, _counted_rows(
            parameters, self.connection.tally))  # type: ignore[attr-defined]

    def executescript(self, script: str, /) -> Self:
        """Run as ``sqlite3.Cursor.executescript``, counted by the trace callback."""
        with _traced(self.connection):
            return super().executescript(script)  # type: ignore[return-value]


class CountedConnection(sqlite3.Connection):
    """A connection counting the statements it runs, as SQLite's trace callback would.

    One count per ``execute`` and per row an ``executemany`` hands SQLite, in the
    :class:`CountedCursor` that runs them (an ``executescript``, rare, counts through the
    trace callback while it runs): ``tally(n)``, which counts nothing until
    :meth:`StatementCounts.trace` sets it (so ``connect``'s pragmas are not counted). Unlike
    the callback, it also counts a statement that fails to compile.

    The connection's own ``execute``, ``executemany`` and ``executescript`` run on a new
    cursor from :meth:`cursor` (its ``row_factory`` the connection's), as
    ``sqlite3.Connection``'s do in C, but call that cursor's Python methods, so the cursor
    alone counts.
    """

    tally: Callable[[int], None] = staticmethod(_no_tally)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        """Run on a new cursor as ``sqlite3.Connection.execute`` does, counted there."""
        return self._cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        """Run on a new cursor as ``sqlite3.Connection.executemany`` does, counted there."""
        return self._cursor().executemany(sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        """Run on a new cursor as ``sqlite3.Connection.executescript`` does, counted there."""
        return self._cursor().executescript(script)

    def cursor(self, factory: Any = CountedCursor) -> Any:
        """Return a cursor, by default a :class:`CountedCursor`."""
        return super().cursor(factory)

    def _cursor(self) -> CountedCursor:
        # Through cursor(), which also gives the cursor the connection's row_factory.
        made: CountedCursor = self.cursor()
        return made


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
