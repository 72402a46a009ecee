"""SQLite schema of the task hub.

``instances`` (with the orchestration lease and ``replay_state``, see
:mod:`devhost.orchestration.sequence`), ``history`` (append-only, D3, D5), ``inbox`` (events
for the next episode; a timer is a row visible at its fire time), ``activities`` (expiring
leases), ``leases`` (unused, kept for older files), ``host_failures`` (L3), ``timer_runs``
(L2), ``entities`` (D10; requests wait in ``inbox``, kind ``entity``), ``partitions`` (the
processes' partition leases, :mod:`devhost.taskhub.partitions`).

A task hub file is brought up to date when it is opened: every statement here is idempotent
(``CREATE ... IF NOT EXISTS``, ``DROP INDEX IF EXISTS``), so a table added later is created in
an older file the first time a newer host opens it; a column added later is added by
:func:`migrate`.
"""

import sqlite3

ID_HASH_SQL_FUNCTION = "devhost_id_hash"
"""SQL function (instance id) -> its FNV-1a hash, registered on every task hub connection
(:func:`devhost.taskhub.partitions.fnv1a_32` of the UTF-8 bytes)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS instances (
    instance_id      TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    version          TEXT,
    runtime_status   TEXT NOT NULL,
    input            TEXT,
    output           TEXT,
    custom_status    TEXT,
    created_at       TEXT NOT NULL,
    last_updated_at  TEXT NOT NULL,
    execution_id     TEXT NOT NULL,
    parent_instance_id TEXT,
    parent_execution_id TEXT,
    parent_task_id   INTEGER,
    lock_owner       TEXT,
    lock_expires     TEXT,
    replay_state     TEXT NOT NULL,
    id_hash          INTEGER,
    history_version  INTEGER NOT NULL DEFAULT 0
);
-- Listing and purging read instances in the order of their pages (created_at, instance_id),
-- so a page is read from an index in order and stops at its LIMIT, however many
-- instances the hub holds. Replaces (runtime_status, created_at) and (created_at), whose
-- pages sorted every matching row; dropped here so an existing task hub file migrates
-- when it is opened (the new ones are built from the table once).
DROP INDEX IF EXISTS ix_instances_status_created;
DROP INDEX IF EXISTS ix_instances_created;
CREATE INDEX IF NOT EXISTS ix_instances_status_page
    ON instances (runtime_status, created_at, instance_id);
CREATE INDEX IF NOT EXISTS ix_instances_page ON instances (created_at, instance_id);

CREATE TABLE IF NOT EXISTS history (
    instance_id   TEXT NOT NULL,
    position      INTEGER NOT NULL,
    event         TEXT NOT NULL,
    PRIMARY KEY (instance_id, position)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS inbox (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id   TEXT NOT NULL,
    execution_id  TEXT,
    kind          TEXT NOT NULL,
    timer_id      INTEGER,
    event         TEXT NOT NULL,
    visible_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_inbox_visible ON inbox (visible_at, instance_id);
CREATE INDEX IF NOT EXISTS ix_inbox_instance ON inbox (instance_id, id);

CREATE TABLE IF NOT EXISTS activities (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id   TEXT NOT NULL,
    execution_id  TEXT NOT NULL,
    task_id       INTEGER NOT NULL,
    name          TEXT NOT NULL,
    input         TEXT,
    lock_owner    TEXT,
    lock_expires  TEXT NOT NULL,
    dequeue_count INTEGER NOT NULL DEFAULT 0,
    UNIQUE (instance_id, execution_id, task_id)
);
CREATE INDEX IF NOT EXISTS ix_activities_lock ON activities (lock_expires);

CREATE TABLE IF NOT EXISTS leases (
    name          TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    expires       TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS entities (
    entity_id     TEXT PRIMARY KEY,
    entity_exists INTEGER NOT NULL DEFAULT 0,
    state         TEXT,
    last_modified TEXT NOT NULL,
    lock_owner    TEXT,
    lock_expires  TEXT
) WITHOUT ROWID;
-- Partial: maintained for entity requests only, so orchestration messages pay nothing.
CREATE INDEX IF NOT EXISTS ix_inbox_entity ON inbox (instance_id, id) WHERE kind = 'entity';
CREATE TABLE IF NOT EXISTS host_failures (
    work          TEXT PRIMARY KEY,
    attempts      INTEGER NOT NULL,
    last_error    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
) WITHOUT ROWID;

-- One row per partition (0 to partitionCount - 1), created by the first process that
-- manages them: DTFx's partition table (TablePartitionManager: CurrentOwner, NextOwner,
-- ExpiresAt, OwnedSince). owner NULL: free; next_owner: the process that asked for it.
CREATE TABLE IF NOT EXISTS partitions (
    partition     INTEGER PRIMARY KEY,
    owner         TEXT,
    next_owner    TEXT,
    expires_at    TEXT,
    owned_since   TEXT
);

CREATE TABLE IF NOT EXISTS timer_runs (
    function      TEXT PRIMARY KEY,
    owner         TEXT,
    lock_expires  TEXT,
    last_start    TEXT,
    last_end      TEXT
) WITHOUT ROWID;
"""


_ADDED_COLUMNS = {
    "id_hash": ("INTEGER", f"UPDATE instances SET id_hash = {ID_HASH_SQL_FUNCTION}(instance_id)"),
    "history_version": ("INTEGER NOT NULL DEFAULT 0", None),
}
"""Columns of ``instances`` added after the first files were written: type, and the statement
filling them in for the rows already there (None: the default does)."""


def _missing_columns(conn: sqlite3.Connection) -> list[str]:
    present = {row[1] for row in conn.execute("PRAGMA table_info(instances)")}
    return [name for name in _ADDED_COLUMNS if name not in present]


def needs_migration(conn: sqlite3.Connection) -> bool:
    """Tell whether :func:`migrate` has anything to add (one read, no transaction)."""
    return bool(_missing_columns(conn))


def migrate(conn: sqlite3.Connection) -> None:
    """Add what :data:`SCHEMA` cannot add to an older file: columns of ``instances``.

    ``id_hash``: the FNV-1a hash of the instance id, whose remainder by ``partitionCount`` is
    the instance's partition (:mod:`devhost.taskhub.partitions`): stored, so a claim filters on
    it in SQL without calling back into Python for each row; filled in for the rows already
    there. ``history_version``: counts the writes of the instance's history, the check of a
    kept session (:mod:`devhost.taskhub.sessions`). Run in the caller's write transaction, so
    two processes opening the file at once add them once.
    """
    for name in _missing_columns(conn):  # none when another process added them meanwhile
        kind, fill = _ADDED_COLUMNS[name]
        conn.execute(f"ALTER TABLE instances ADD COLUMN {name} {kind}")
        if fill is not None:
            conn.execute(fill)
