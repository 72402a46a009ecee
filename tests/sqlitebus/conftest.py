"""Fixtures for the local Service Bus tests: a fresh SQLite file and a ManualClock per test."""

import copy
import json

import pytest

from clocks import ManualClock
from sqlitebus import ServiceBusEngine, load_queue_catalog

# Explicit properties, so the tests do not depend on the values in infra/queues.json.
QUEUES_DOC = {
    "defaults": {
        "lockDuration": "PT30S",
        "maxDeliveryCount": 3,
        "requiresDuplicateDetection": True,
        "duplicateDetectionHistoryTimeWindow": "PT10M",
        "deadLetteringOnMessageExpiration": True,
        "defaultMessageTimeToLive": "P1D",
    },
    "queues": {
        "work": {},
        "other": {},
        "expiry-discards": {"deadLetteringOnMessageExpiration": False},
        "no-dedup": {"requiresDuplicateDetection": False},
    },
    "clientReplyQueues": {"namePattern": "replies-{clientId}", "properties": {}},
}


@pytest.fixture
def queues_doc():
    return copy.deepcopy(QUEUES_DOC)


@pytest.fixture
def queues_file(tmp_path, queues_doc):
    path = tmp_path / "queues.json"
    path.write_text(json.dumps(queues_doc), encoding="utf-8")
    return path


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def catalog(queues_file):
    return load_queue_catalog(queues_file)


@pytest.fixture
def engine(tmp_path, catalog, clock):
    eng = ServiceBusEngine.in_data_dir(tmp_path / "data", catalog=catalog, clock=clock)
    yield eng
    eng.close()
