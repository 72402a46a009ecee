"""MAX_PROCESSING is never exceeded, however many submissions and starters claim at once (S3)."""

import asyncio
import sqlite3
import threading

from orders.models import ProcessState
from scheduler.starter import run_starter
from tests.support.durable_client import StartRecorder, start_submitted
from tests.support.records import record_in

PEAK_TRIGGER = """
CREATE TABLE processing_peak (n INTEGER NOT NULL);
CREATE TRIGGER record_processing_peak AFTER UPDATE OF process_state ON state_records
BEGIN
    INSERT INTO processing_peak
    SELECT COUNT(*) FROM state_records WHERE process_state = 'Processing';
END;
"""
"""Records, inside each write's own transaction, how many records are Processing after it."""


def with_settings(services, **changes):
    settings = services.settings.model_copy(update=changes)
    return type(services)(**{**vars(services), "settings": settings})


def peak_of(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COALESCE(MAX(n), 0) FROM processing_peak").fetchone()[0]


def test_concurrent_submissions_and_starters_never_pass_max_processing(services, stores,
                                                                      clock, tmp_path):
    limited = with_settings(services, MAX_PROCESSING=3)
    records = [record_in(stores.states, clock, ProcessState.PENDING, order_key=f"ORD-{n}")
               for n in range(24)]
    with sqlite3.connect(tmp_path / "state.sqlite") as conn:
        conn.executescript(PEAK_TRIGGER)
    client = StartRecorder()
    gate = threading.Barrier(4)

    async def submissions(mine):
        return await asyncio.gather(*(start_submitted(client, limited, r) for r in mine),
                                    run_starter(client, limited))

    def thread(mine):
        gate.wait()
        asyncio.run(submissions(mine))

    threads = [threading.Thread(target=thread, args=(records[n::4],)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    processing = stores.states.count_by_state([ProcessState.PROCESSING])
    assert processing == {ProcessState.PROCESSING: 3}
    assert peak_of(tmp_path / "state.sqlite") == 3
    assert len(client.started) == 3
