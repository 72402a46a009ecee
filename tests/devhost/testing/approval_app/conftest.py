"""The durable_host fixture loads this folder's app (a conftest's override, docs/testing.md)."""

from pathlib import Path

import pytest


@pytest.fixture
def durable_app_dir():
    return Path(__file__).parent
