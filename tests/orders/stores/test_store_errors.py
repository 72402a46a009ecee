"""How each store backend's failures map to the store errors: by code, never by text.

SQLite errors are told by ``sqlite_errorcode``; Cosmos DB errors by HTTP status,
sub-status and ``x-ms-retry-after-ms``. Each case asserts the class, ``retryable`` and
``retry_after`` a caller acts on.
"""

import sqlite3
from datetime import timedelta

import pytest
import requests
from azure.core.exceptions import ServiceRequestError
from azure.core.pipeline.transport import HttpRequest, RequestsTransportResponse
from azure.cosmos.exceptions import CosmosHttpResponseError
from store_builders import make_record

from clocks import ManualClock
from orders.errors import OrderServiceError
from orders.stores import (
    ConflictError,
    NotFoundError,
    PreconditionFailedError,
    StoreError,
    TransientStoreError,
)
from orders.stores._cosmos import translated
from orders.stores._sqlite import Database
from orders.stores.sqlite_state import SqliteStateStore


# ----------------------------------------------------------------------------- SQLite
def test_sqlite_busy_is_a_retryable_transient_store_error(tmp_path):
    clock = ManualClock()
    store = SqliteStateStore(tmp_path / "state.sqlite", clock=clock)
    other = sqlite3.connect(tmp_path / "state.sqlite", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        store._db.conn.execute("PRAGMA busy_timeout=0")  # give up at once, not after 30 s
        with pytest.raises(TransientStoreError) as info:
            store.create_if_absent(make_record("ORD-BUSY", clock.now()))
    finally:
        other.execute("ROLLBACK")
        other.close()
    error = info.value
    assert isinstance(error.__cause__, sqlite3.OperationalError)
    assert error.__cause__.sqlite_errorname == "SQLITE_BUSY"
    assert error.retryable is True
    assert error.retry_after is None
    # Nothing was written, and the same call succeeds once the lock is free.
    assert store.get("ORD-BUSY") is None
    store.create_if_absent(make_record("ORD-BUSY", clock.now()))
    assert store.get("ORD-BUSY").order_key == "ORD-BUSY"
    store.close()


def permanent_error(db: Database, sql: str, errorname: str) -> StoreError:
    """Run ``sql`` on ``db`` (then close it); it raises a plain, permanent StoreError."""
    with pytest.raises(StoreError) as info, db.use() as conn:
        conn.execute(sql)
    db.close()
    assert type(info.value) is StoreError
    assert info.value.__cause__.sqlite_errorname == errorname
    assert info.value.retryable is False
    return info.value


def test_sqlite_error_whose_text_says_locked_or_busy_is_still_permanent(tmp_path):
    # The old mapping read the message: "no such table: locked_busy" would have been
    # taken for a busy database. The code (SQLITE_ERROR) says it is not.
    db = Database(tmp_path / "x.sqlite")
    error = permanent_error(db, "SELECT * FROM locked_busy", "SQLITE_ERROR")
    assert error.retry_after is None


def test_sqlite_constraint_violation_is_permanent(tmp_path):
    db = Database(tmp_path / "x.sqlite")
    with db.use() as conn:
        conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES ('a')")
    permanent_error(db, "INSERT INTO t VALUES ('a')", "SQLITE_CONSTRAINT_PRIMARYKEY")


# ----------------------------------------------------------------------------- Cosmos DB
def cosmos_error(status: int, headers: dict[str, str] | None = None) -> CosmosHttpResponseError:
    """A Cosmos DB error as the SDK raises it from an HTTP response (requests transport)."""
    response = requests.Response()
    response.status_code = status
    response.reason = "refused"
    response.headers.update({"Content-Type": "application/json", **(headers or {})})
    response._content = b'{"code":"Refused","message":"refused by the test"}'
    request = HttpRequest("GET", "https://acct.documents.azure.com/dbs/d/colls/c/docs/O1")
    return CosmosHttpResponseError(message="refused by the test",
                                   response=RequestsTransportResponse(request, response))


def translate(error: Exception) -> StoreError:
    with pytest.raises(StoreError) as info, translated("read O1"):
        raise error
    assert info.value.__cause__ is error
    return info.value


@pytest.mark.parametrize(("status", "headers", "kind", "retryable", "retry_after"), [
    (429, {"x-ms-retry-after-ms": "1500"}, TransientStoreError, True,
     timedelta(milliseconds=1500)),
    (429, {}, TransientStoreError, True, None),
    (429, {"x-ms-retry-after-ms": "soon"}, TransientStoreError, True, None),
    (503, {"x-ms-retry-after-ms": "250"}, TransientStoreError, True, timedelta(milliseconds=250)),
    (408, {}, TransientStoreError, True, None),
    (449, {}, TransientStoreError, True, None),
    (412, {}, PreconditionFailedError, False, None),
    (409, {}, ConflictError, False, None),
    (404, {}, NotFoundError, False, None),
    (404, {"x-ms-substatus": "0"}, NotFoundError, False, None),
    (404, {"x-ms-substatus": "1003"}, StoreError, False, None),
    (404, {"x-ms-substatus": "1002"}, TransientStoreError, True, None),
    (403, {}, StoreError, False, None),
    (400, {}, StoreError, False, None),
])
def test_cosmos_status_maps_to_class_and_flag(status, headers, kind, retryable, retry_after):
    error = translate(cosmos_error(status, headers))
    assert type(error) is kind
    assert isinstance(error, OrderServiceError)
    assert error.retryable is retryable
    assert error.retry_after == retry_after


def test_cosmos_429_with_retry_after_says_how_long_to_wait():
    error = translate(cosmos_error(429, {"x-ms-retry-after-ms": "1500"}))
    assert type(error) is TransientStoreError
    assert error.retryable is True
    assert error.retry_after == timedelta(seconds=1.5)
    assert "read O1: Cosmos DB answered 429" in str(error)


def test_cosmos_without_an_answer_is_retryable():
    error = translate(ServiceRequestError("connection refused"))
    assert type(error) is TransientStoreError
    assert error.retryable is True
    assert error.retry_after is None
