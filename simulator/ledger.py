"""The simulator's ledger: every side effect it performed and every request it received.

Why and how (exactly once, one transaction, retention): docs/simulator.md, "The ledger".
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlitekit as devsqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS side_effects (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    service TEXT NOT NULL,
    kind TEXT NOT NULL,
    order_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    amount TEXT,
    currency TEXT,
    resource_id TEXT NOT NULL,
    ref_id TEXT,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS side_effects_order ON side_effects (service, order_id);
CREATE INDEX IF NOT EXISTS side_effects_ref ON side_effects (service, ref_id);
CREATE TABLE IF NOT EXISTS idempotency (
    service TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (service, idempotency_key)
);
CREATE TABLE IF NOT EXISTS requests (
    service TEXT NOT NULL,
    order_id TEXT NOT NULL,
    operation TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (service, order_id, operation)
);
"""


@dataclass(frozen=True)
class SideEffect:
    """One side effect performed by the simulator.

    ``amount`` is a decimal string and ``currency`` ISO 4217 (None for shipping); ``ref_id``
    is what a refund or cancel undoes; ``at`` is simulator-clock UTC.
    """

    service: str
    kind: str
    order_key: str
    idempotency_key: str
    amount: str | None
    currency: str | None
    resource_id: str
    ref_id: str | None
    at: datetime

    def to_json(self) -> dict[str, Any]:
        """Return the camelCase JSON form used by ``GET /_admin/ledger``."""
        return {
            "service": self.service,
            "kind": self.kind,
            "orderId": self.order_key,
            "idempotencyKey": self.idempotency_key,
            "amount": self.amount,
            "currency": self.currency,
            "resourceId": self.resource_id,
            "refId": self.ref_id,
            "at": self.at.isoformat(),
        }


@dataclass(frozen=True)
class RequestCount:
    """How many requests the simulator received for one order, service and operation."""

    service: str
    order_key: str
    operation: str
    count: int


@dataclass(frozen=True)
class Answer:
    """What an operation answers (kept for replay only if 2xx) and the effect recorded with it."""

    status: int
    body: dict[str, Any]
    effect: SideEffect | None = None


@dataclass(frozen=True)
class IdempotentResult:
    """Result of :meth:`Ledger.run_idempotent`; ``replayed`` marks a stored earlier answer."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


def _effect_from_row(row: sqlite3.Row) -> SideEffect:
    return SideEffect(
        service=row["service"],
        kind=row["kind"],
        order_key=row["order_id"],
        idempotency_key=row["idempotency_key"],
        amount=row["amount"],
        currency=row["currency"],
        resource_id=row["resource_id"],
        ref_id=row["ref_id"],
        at=datetime.fromisoformat(row["at"]),
    )


PURGE_SETTLED = (
    "SELECT f.id, u.id FROM side_effects AS f JOIN side_effects AS u "
    "ON u.service = f.service AND u.ref_id = f.resource_id "
    "WHERE f.kind IN ('charge', 'ship') AND f.at < ? AND u.at < ?")
"""Effects and their undo, both older than the cutoff (each undo found by index)."""

PURGE_REQUESTS = (
    "DELETE FROM requests WHERE NOT EXISTS (SELECT 1 FROM side_effects AS e "
    "WHERE e.service = requests.service AND e.order_id = requests.order_id)"
    " AND NOT EXISTS (SELECT 1 FROM idempotency AS i WHERE i.service = requests.service"
    " AND i.idempotency_key >= requests.order_id || ':'"
    " AND i.idempotency_key < requests.order_id || ';')")
"""Request counts of orders with no effect and no stored answer left. The answers of an
order are its keys ``<order key>:...``: a range of the primary key (':' + 1 is ';'), so
each request row costs one index search, not a scan of every answer."""


class Ledger(devsqlite.SharedConnection):
    """Read (and, for the simulator itself, write) the ledger file; thread-safe."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        with self._lock, devsqlite.write(self._conn):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._conn.execute(statement)

    def purge_before(self, cutoff: datetime) -> int:
        """Apply the retention before ``cutoff`` (timezone-aware); return the rows deleted."""
        at = cutoff.isoformat()
        with self._lock, devsqlite.write(self._conn):
            settled = self._conn.execute(PURGE_SETTLED, (at, at)).fetchall()
            ids = [(row_id,) for pair in settled for row_id in pair]
            deleted = self._conn.executemany("DELETE FROM side_effects WHERE id = ?",
                                             ids).rowcount
            deleted += self._conn.execute("DELETE FROM idempotency WHERE at < ?", (at,)).rowcount
            deleted += self._conn.execute(PURGE_REQUESTS).rowcount
        return deleted

    # -- reading -------------------------------------------------------------------------

    def side_effects(
        self, *, service: str | None = None, order_key: str | None = None, kind: str | None = None
    ) -> list[SideEffect]:
        """Return side effects in the order performed, optionally filtered."""
        clauses, params = [], []
        for column, value in (("service", service), ("order_id", order_key), ("kind", kind)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT * FROM side_effects {where} ORDER BY id", params
            ).fetchall()
        return [_effect_from_row(row) for row in rows]

    def effect_counts(self) -> dict[tuple[str, str, str], int]:
        """Count side effects per ``(service, kind, order_id)`` ("exactly once": all values 1)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT service, kind, order_id, COUNT(*) AS n FROM side_effects"
                " GROUP BY service, kind, order_id"
            ).fetchall()
        return {(r["service"], r["kind"], r["order_id"]): r["n"] for r in rows}

    def effects_by_order(self) -> dict[str, list[SideEffect]]:
        """Return every side effect grouped by OrderID, oldest first; orders with none absent."""
        grouped: dict[str, list[SideEffect]] = {}
        for effect in self.side_effects():
            grouped.setdefault(effect.order_key, []).append(effect)
        return grouped

    def request_counts(self) -> list[RequestCount]:
        """Return the number of requests received per service, order and operation."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM requests ORDER BY service, order_id, operation"
            ).fetchall()
        return [RequestCount(r["service"], r["order_id"], r["operation"], r["count"]) for r in rows]

    def request_count(self, service: str, order_key: str, operation: str | None = None) -> int:
        """Return how many requests for ``order_key`` reached ``service``, whatever their answer."""
        sql = "SELECT COALESCE(SUM(count), 0) FROM requests WHERE service = ? AND order_id = ?"
        params = [service, order_key]
        if operation is not None:
            sql += " AND operation = ?"
            params.append(operation)
        with self._lock:
            return int(self._conn.execute(sql, params).fetchone()[0])

    # -- writing (used by the simulator app) ---------------------------------------------

    def record_request(self, service: str, order_key: str, operation: str) -> int:
        """Count one received request; return its 1-based ordinal for its order and operation."""
        with self._lock, devsqlite.write(self._conn) as conn:
            conn.execute(
                "INSERT INTO requests (service, order_id, operation, count) VALUES (?, ?, ?, 1)"
                " ON CONFLICT (service, order_id, operation) DO UPDATE SET count = count + 1",
                (service, order_key, operation),
            )
            row = conn.execute(
                "SELECT count FROM requests WHERE service = ? AND order_id = ? AND operation = ?",
                (service, order_key, operation),
            ).fetchone()
        return int(row[0])

    def run_idempotent(
        self,
        *,
        service: str,
        key: str,
        fingerprint: str,
        now: datetime,
        operation: Callable[[sqlite3.Connection], Answer],
    ) -> IdempotentResult:
        """Run ``operation`` at most once per ``(service, key)``, Stripe-style.

        ``fingerprint`` hashes method, path and canonical body; ``operation`` gets the connection
        inside the transaction. The same key and fingerprint replay the stored answer, another
        fingerprint answers 422 ``idempotency_key_reused``.
        """
        with self._lock, devsqlite.write(self._conn) as conn:
            row = conn.execute(
                "SELECT fingerprint, status, body FROM idempotency"
                " WHERE service = ? AND idempotency_key = ?",
                (service, key),
            ).fetchone()
            if row is not None:
                if row["fingerprint"] == VOID_FINGERPRINT:
                    # The request was voided by an undo that found nothing to undo: it is
                    # never carried out, however late it arrives.
                    return IdempotentResult(row["status"], json.loads(row["body"]))
                if row["fingerprint"] != fingerprint:
                    return IdempotentResult(
                        422,
                        {
                            "error": "idempotency_key_reused",
                            "message": "Idempotency-Key: already used with a different"
                            " request (method, path or body)",
                        },
                    )
                return IdempotentResult(row["status"], json.loads(row["body"]), replayed=True)
            answer = operation(conn)
            if 200 <= answer.status < 300:
                if answer.effect is not None:
                    e = answer.effect
                    conn.execute(
                        "INSERT INTO side_effects (service, kind, order_id, idempotency_key,"
                        " amount, currency, resource_id, ref_id, at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (e.service, e.kind, e.order_key, e.idempotency_key, e.amount,
                         e.currency, e.resource_id, e.ref_id, e.at.isoformat()),
                    )
                conn.execute(
                    "INSERT INTO idempotency (service, idempotency_key, fingerprint, status,"
                    " body, at) VALUES (?, ?, ?, ?, ?, ?)",
                    (service, key, fingerprint, answer.status, json.dumps(answer.body),
                     now.isoformat()),
                )
            return IdempotentResult(answer.status, answer.body)


VOID_FINGERPRINT = "void"
"""Fingerprint of an idempotency record that voids a key (see :func:`void_key`)."""


def void_key(conn: sqlite3.Connection, service: str, key: str, now: datetime) -> None:
    """Void ``key`` in the caller's transaction, so a request with it answers 409 ``voided``.

    A key already used keeps its stored answer (nothing is voided).
    """
    conn.execute(
        "INSERT OR IGNORE INTO idempotency (service, idempotency_key, fingerprint, status,"
        " body, at) VALUES (?, ?, ?, ?, ?, ?)",
        (service, key, VOID_FINGERPRINT, 409, json.dumps({
            "error": "voided", "message": f"Idempotency-Key: {key!r} was voided by an undo "
            "that found nothing to undo; this request is not carried out"}), now.isoformat()))


def effects_of(conn: sqlite3.Connection, service: str, order_key: str) -> list[SideEffect]:
    """Return one order's side effects at ``service``, oldest first, in ``conn``'s transaction."""
    rows = conn.execute(
        "SELECT * FROM side_effects WHERE service = ? AND order_id = ? ORDER BY id",
        (service, order_key),
    ).fetchall()
    return [_effect_from_row(row) for row in rows]
