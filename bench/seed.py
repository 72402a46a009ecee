"""A task hub that already holds many completed order instances, built in an untimed step.

The instances are copies of the Completed instances of a real run's task hub (the
template: their rows and full histories, 52 events each for an order of the demo), under
new instance ids (``seed<copy>-<original id>``) and created 1 to 28 days before the
original, so the hub looks like four weeks of finished orders, all within the default
retention (``RETENTION_DAYS`` 30), which the retention timer keeps. The new file's schema
is the host's own (:data:`devhost.taskhub.schema.SCHEMA`, as its task hub creates it),
and the copy is one bulk ``INSERT ... SELECT`` per table over the columns both files
have, so it follows the schema as it changes.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from devhost.taskhub.schema import SCHEMA

DAYS = 28
"""The copies' creation times are spread over this many days before the template's."""

_COPIES = "WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < ?) "


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA {schema}.table_info({table})")]


def _shifted(column: str) -> str:
    # Keep the stored text form (its fraction and zone suffix), move the date back.
    return (f"substr(strftime('%Y-%m-%dT%H:%M:%S', {column}, "
            f"'-' || (1 + k.n % {DAYS}) || ' days'), 1, 19) || substr({column}, 20)")


def seed_completed(template: Path, out: Path, count: int) -> int:
    """Write a new task hub at ``out`` holding ``count`` completed instances.

    Parameters
    ----------
    template : Path
        A task hub file with at least one Completed instance (a finished run's).
    out : Path
        The new task hub file (replaced if it exists).
    count : int
        Completed instances to write, at least 1.

    Returns
    -------
    int
        History rows written.

    Raises
    ------
    ValueError
        If ``count`` < 1 or the template holds no Completed instance.
    """
    if count < 1:
        raise ValueError(f"count: must be at least 1, got {count!r}")
    out.unlink(missing_ok=True)
    for suffix in ("-wal", "-shm", ".lock"):
        Path(f"{out}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(out, isolation_level=None)
    try:
        conn.executescript(SCHEMA)  # the host's own schema, as TaskHub creates it
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("ATTACH DATABASE ? AS t", (f"file:{template}?mode=ro",))
        ids = [r[0] for r in conn.execute(
            "SELECT instance_id FROM t.instances WHERE runtime_status = 'Completed' "
            "ORDER BY instance_id")]
        if not ids:
            raise ValueError(f"template: {template} holds no Completed instance")
        copies = -(-count // len(ids))
        conn.execute("BEGIN")
        conn.execute("CREATE TEMP TABLE picked AS SELECT n, instance_id FROM "
                     f"({_COPIES}SELECT k.n, i.instance_id FROM k, t.instances AS i "
                     "WHERE i.runtime_status = 'Completed' ORDER BY k.n, i.instance_id "
                     "LIMIT ?)", (copies - 1, count))
        new_id = "'seed' || k.n || '-' || src.instance_id"
        cols = [c for c in _columns(conn, "main", "instances")
                if c in _columns(conn, "t", "instances")]
        exprs = [new_id if c == "instance_id" else _shifted(f"src.{c}")
                 if c in ("created_at", "last_updated_at") else f"src.{c}" for c in cols]
        conn.execute(f"INSERT INTO instances ({', '.join(cols)}) SELECT {', '.join(exprs)} "
                     "FROM temp.picked AS k JOIN t.instances AS src "
                     "ON src.instance_id = k.instance_id")
        hcols = [c for c in _columns(conn, "main", "history")
                 if c in _columns(conn, "t", "history")]
        hexprs = [new_id if c == "instance_id" else f"src.{c}" for c in hcols]
        written = conn.execute(
            f"INSERT INTO history ({', '.join(hcols)}) SELECT {', '.join(hexprs)} "
            "FROM temp.picked AS k JOIN t.history AS src ON src.instance_id = k.instance_id "
            "ORDER BY 1, src.position").rowcount
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE t")
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()
    with out.open("rb+") as seeded:  # on disk now, not written back during a timed run
        os.fsync(seeded.fileno())
    return written
