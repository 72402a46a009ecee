"""An app folder's own copy of a package the host already imported is named in a WARNING."""

import logging
from pathlib import Path

import clocks  # noqa: F401 - imported by the host before any app
from devhost.app.discovery import warn_shadowed_packages

REPO = Path(__file__).resolve().parents[3]


def test_an_app_copy_of_a_host_package_is_named(tmp_path, caplog):
    # An app-only name no other test imports (sys.modules is shared within a test worker).
    for package in ("clocks", "shadow_test_app_only"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    with caplog.at_level(logging.WARNING, logger="devhost"):
        assert warn_shadowed_packages(tmp_path) == ["clocks"]
    assert f"the app's package clocks/ is not the one in use: clocks was imported from " \
           f"{REPO / 'clocks'} before the app" in caplog.text


def test_this_repository_run_from_its_checkout_shares_one_copy():
    assert warn_shadowed_packages(REPO) == []
