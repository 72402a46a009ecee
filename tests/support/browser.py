"""A headless Chromium page driven by Playwright, on the system's browser (Debian ``chromium``).

Playwright's own browser downloads are never used: the test command installs the Debian
package when ``/usr/bin/chromium`` is missing (the Makefile's ``chromium`` prerequisite),
and :func:`open_page` launches that executable. Every dialog (``alert``, ``confirm``,
``prompt``) the page opens is recorded and dismissed, so a test can assert none fired.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@contextmanager
def open_page(width: int = 1400, height: int = 1000) -> Iterator[tuple[object, list[str]]]:
    """Yield a fresh page and the list its dialogs' messages are appended to."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), (f"{CHROMIUM} is missing: `make test` installs it "
                               "(apt-get install -y chromium)")
    dialogs: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message),
                                              dialog.dismiss()))
            yield page, dialogs
        finally:
            browser.close()
