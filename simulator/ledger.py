"""The simulator's ledger: every side effect it performed and every request it received.

Tests and the demo prove the system's central promise with it: each side effect (charge,
refund, shipment, cancellation) happened exactly once per order however many retries,
redeliveries and recoveries there were (SPEC A2, X7), and the number of calls per order
stayed inside the retry budget (SPEC X2). It is a SQLite file opened with
:func:`sqlitekit.connect`, so another process (a test, the demo) can read it while
the simulator writes.

The idempotency records live in the same file and are written in the same IMMEDIATE
transaction as the side effect they guard, so a side effect and its stored answer commit
together or not at all, and two concurrent requests with one ``Idempotency-Key`` perform
the side effect once.
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

    Attributes
    ----------
    service : str
        ``payment`` or ``shipping``.
    kind : str
        ``charge``, ``refund``, ``ship`` or ``cancel``.
    order_id : str
        The order it belongs to.
    idempotency_key : str
        The ``Idempotency-Key`` of the request that caused it.
    amount, currency : str or None
        Money moved (decimal string, ISO 4217 code); None for shipping.
    resource_id : str
        Id of what was created (payment, refund, shipment id).
    ref_id : str or None
        For refund/cancel: the payment or shipment it undoes.
    at : datetime
        Simulator-clock time of the side effect (UTC).
    """

    service: str
    kind: str
    order_id: str
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
            "orderId": self.order_id,
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
    order_id: str
    operation: str
    count: int


@dataclass(frozen=True)
class Answer:
    """What an operation answers, and the side effect to record if it succeeded.

    Attributes
    ----------
    status : int
        HTTP status; only a 2xx answer is stored for idempotent replay.
    body : dict
        JSON body.
    effect : SideEffect or None
        The side effect, recorded in the same transaction as the stored answer.
    """

    status: int
    body: dict[str, Any]
    effect: SideEffect | None = None


@dataclass(frozen=True)
class IdempotentResult:
    """Result of :meth:`Ledger.run_idempotent`.

    Attributes
    ----------
    status : int
        HTTP status to send.
    body : dict
        JSON body to send.
    replayed : bool
        True if this is the stored answer of an earlier request with the same key.
    """

    status: int
    body: dict[str, Any]
    replayed: bool = False


def _effect_from_row(row: sqlite3.Row) -> SideEffect:
    return SideEffect(
        service=row["service"],
        kind=row["kind"],
        order_id=row["order_id"],
        idempotency_key=row["idempotency_key"],
        amount=row["amount"],
        currency=row["currency"],
        resource_id=row["resource_id"],
        ref_id=row["ref_id"],
        at=datetime.fromisoformat(row["at"]),
    )


class Ledger(devsqlite.SharedConnection):
    """Read (and, for the simulator itself, write) the ledger file.

    Parameters
    ----------
    path : str or Path
        The SQLite file; created with its tables if missing.

    Notes
    -----
    One connection guarded by a lock, so an instance can be shared by threads.
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        with self._lock, devsqlite.write(self._conn):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._conn.execute(statement)

    def purge_before(self, cutoff: datetime) -> int:
        """Forget what a payment or shipping API forgets with time: the ledger's retention.

        Stored idempotent answers older than ``cutoff`` go (a key whose answer is gone is
        served as new, as a real API does once it forgets a key), and so does every
        effect that is settled: a charge and its refund, or a shipment and its
        cancellation, both recorded before ``cutoff``. An effect still open (a charge never
        refunded) is the service's books and is kept however old, so an undo that comes
        late (a compensation waiting for its operator) still finds it. The request counts
        of orders with no effect and no stored answer left go with them.

        Parameters
        ----------
        cutoff : datetime
            Timezone-aware; rows stamped earlier are deleted.

        Returns
        -------
        int
            Rows deleted over the three tables.
        """
        at = cutoff.isoformat()
        with self._lock, devsqlite.write(self._conn):
            settled = self._conn.execute(
                "SELECT f.id, u.id FROM side_effects AS f JOIN side_effects AS u "
                "ON u.service = f.service AND u.ref_id = f.resource_id "
                "WHERE f.kind IN ('charge', 'ship') AND f.at < ? AND u.at < ?",
                (at, at)).fetchall()
            ids = [(row_id,) for pair in settled for row_id in pair]
            deleted = self._conn.executemany("DELETE FROM side_effects WHERE id = ?",
                                             ids).rowcount
            deleted += self._conn.execute("DELETE FROM idempotency WHERE at < ?", (at,)).rowcount
            deleted += self._conn.execute(
                "DELETE FROM requests WHERE NOT EXISTS (SELECT 1 FROM side_effects AS e "
                "WHERE e.service = requests.service AND e.order_id = requests.order_id)"
                " AND NOT EXISTS (SELECT 1 FROM idempotency AS i WHERE i.service = "
                "requests.service AND substr(i.idempotency_key, 1, "
                "length(requests.order_id) + 1) = requests.order_id || ':')"
            ).rowcount
        return deleted

    # -- reading -------------------------------------------------------------------------

    def side_effects(
        self, *, service: str | None = None, order_id: str | None = None, kind: str | None = None
    ) -> list[SideEffect]:
        """Return side effects in the order performed, optionally filtered.

        Parameters
        ----------
        service, order_id, kind : str, optional
            Keep only rows with these values.

        Returns
        -------
        list of SideEffect
        """
        clauses, params = [], []
        for column, value in (("service", service), ("order_id", order_id), ("kind", kind)):
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
        """Count side effects per ``(service, kind, order_id)``.

        Returns
        -------
        dict of (str, str, str) to int
            A test asserts "each side effect exactly once" by comparing this with a dict
            whose values are all 1.
        """
        with self._lock:
            rows = self._conn.execute(
                "SELECT service, kind, order_id, COUNT(*) AS n FROM side_effects"
                " GROUP BY service, kind, order_id"
            ).fetchall()
        return {(r["service"], r["kind"], r["order_id"]): r["n"] for r in rows}

    def effects_by_order(self) -> dict[str, list[SideEffect]]:
        """Return every side effect grouped by order, each order's in the order performed.

        Returns
        -------
        dict of str to list of SideEffect
            OrderID to its side effects of both services (charges, refunds, shipments,
            cancellations); orders without any are absent. The ledger audit of the demo
            (``demo.audit``) nets them per order.
        """
        grouped: dict[str, list[SideEffect]] = {}
        for effect in self.side_effects():
            grouped.setdefault(effect.order_id, []).append(effect)
        return grouped

    def request_counts(self) -> list[RequestCount]:
        """Return the number of requests received per service, order and operation."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM requests ORDER BY service, order_id, operation"
            ).fetchall()
        return [RequestCount(r["service"], r["order_id"], r["operation"], r["count"]) for r in rows]

    def request_count(self, service: str, order_id: str, operation: str | None = None) -> int:
        """Return how many requests for ``order_id`` reached ``service``.

        Parameters
        ----------
        service : str
            ``payment`` or ``shipping``.
        order_id : str
            The order.
        operation : str, optional
            Only this operation (``charge``, ``refund``, ``ship``, ``cancel``).

        Returns
        -------
        int
            Every request counts, whatever its answer (faults, replays, errors).
        """
        sql = "SELECT COALESCE(SUM(count), 0) FROM requests WHERE service = ? AND order_id = ?"
        params = [service, order_id]
        if operation is not None:
            sql += " AND operation = ?"
            params.append(operation)
        with self._lock:
            return int(self._conn.execute(sql, params).fetchone()[0])

    # -- writing (used by the simulator app) ---------------------------------------------

    def record_request(self, service: str, order_id: str, operation: str) -> int:
        """Count one received request.

        Returns
        -------
        int
            The request's 1-based ordinal for ``(service, order_id, operation)``.
        """
        with self._lock, devsqlite.write(self._conn) as conn:
            conn.execute(
                "INSERT INTO requests (service, order_id, operation, count) VALUES (?, ?, ?, 1)"
                " ON CONFLICT (service, order_id, operation) DO UPDATE SET count = count + 1",
                (service, order_id, operation),
            )
            row = conn.execute(
                "SELECT count FROM requests WHERE service = ? AND order_id = ? AND operation = ?",
                (service, order_id, operation),
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

        Parameters
        ----------
        service : str
            Scope of the key (keys of different services never collide).
        key : str
            The request's ``Idempotency-Key``.
        fingerprint : str
            Hash of method, path and canonical body; a key reused with another
            fingerprint is refused.
        now : datetime
            Time stamped on the stored answer.
        operation : callable
            Receives the connection inside the transaction (to read earlier side
            effects) and returns an :class:`Answer`.

        Returns
        -------
        IdempotentResult
            The stored answer (``replayed=True``) if the key was seen with the same
            fingerprint; 422 ``idempotency_key_reused`` if seen with another; otherwise
            the operation's answer. Only 2xx answers are stored, with their side effect,
            so a refused request may be retried with the same key.
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
                        (e.service, e.kind, e.order_id, e.idempotency_key, e.amount,
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
    """Void ``key`` inside the caller's transaction: a request with it is never carried out.

    An undo that finds nothing to undo for a forward request voids that request's key, so
    the forward request, if it is still on its way (late in the network, queued in the
    service), answers 409 ``voided`` and performs nothing: "nothing to undo" stays true.
    A key already used keeps its stored answer (nothing is voided).
    """
    conn.execute(
        "INSERT OR IGNORE INTO idempotency (service, idempotency_key, fingerprint, status,"
        " body, at) VALUES (?, ?, ?, ?, ?, ?)",
        (service, key, VOID_FINGERPRINT, 409, json.dumps({
            "error": "voided", "message": f"Idempotency-Key: {key!r} was voided by an undo "
            "that found nothing to undo; this request is not carried out"}), now.isoformat()))


def effects_of(conn: sqlite3.Connection, service: str, order_id: str) -> list[SideEffect]:
    """Return the side effects of one order and service, oldest first, inside a transaction.

    Parameters
    ----------
    conn : sqlite3.Connection
        The connection handed to an operation by :meth:`Ledger.run_idempotent`.
    service, order_id : str
        Which order and service.

    Returns
    -------
    list of SideEffect
    """
    rows = conn.execute(
        "SELECT * FROM side_effects WHERE service = ? AND order_id = ? ORDER BY id",
        (service, order_id),
    ).fetchall()
    return [_effect_from_row(row) for row in rows]
