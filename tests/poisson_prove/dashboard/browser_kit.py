"""A page of the dashboard opened in Debian's headless Chromium (Playwright, never its own
browser build), watching what the page tries to do: dialogs, script errors, requests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
# Chromium's own background traffic off: this machine's network is closed, and a page test must
# see only the page's requests.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-default-apps", "--disable-sync", "--no-first-run",
]


@dataclass
class Watched:
    """What the page did while it was open."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def assert_inert(self) -> None:
        """No dialog, no script error, nothing fetched but the file itself."""
        assert self.dialogs == [] and self.errors == []
        assert all(url.startswith("file:") for url in self.requests)


@contextmanager
def opened(page_path: Path | str, watched: Watched) -> Iterator[Any]:
    """The page at `page_path` (or a URL), loaded, in a 1280x900 viewport; the browser closed after."""
    from playwright.sync_api import sync_playwright  # playwright: only for the browser tests

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("dialog", lambda d: (watched.dialogs.append(d.message), d.dismiss()))
            page.on("console", lambda m: watched.errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: watched.errors.append(str(e)))
            page.on("request", lambda r: watched.requests.append(r.url))
            page.goto(page_path.as_uri() if isinstance(page_path, Path) else page_path)
            page.wait_for_load_state("load")
            yield page
        finally:
            browser.close()
