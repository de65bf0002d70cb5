"""Open a rendered report in Debian's headless Chromium through playwright.

Only the system browser is used (no ``playwright install``). Every request the page
makes and every console message is recorded, so tests can insist on none.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

__all__ = ["ARTIFACTS", "CHROMIUM", "PageVisit", "browser", "visit"]

CHROMIUM = os.environ.get("NERFWATCH_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class PageVisit:
    """What happened while a page loaded, plus handles to inspect it."""

    page: object
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless Chromium per test module."""
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)  # in CI the bootstrap installs it: missing is a failure
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=CHROMIUM, args=_ARGS, headless=True)
        try:
            yield instance
        finally:
            instance.close()


def visit(
    browser: object,
    path: Path,
    *,
    screenshot: str | Path | None = None,
    width: int = 1100,
) -> PageVisit:
    """Load ``path`` in a fresh page ``width`` CSS pixels wide; optionally save a full-page
    screenshot (a bare name goes to the artifacts folder, a ``Path`` where it says)."""
    page = browser.new_page(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    result = PageVisit(page)
    page.on("request", lambda r: result.requests.append(r.url))
    page.on("console", lambda m: result.console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: result.errors.append(str(e)))
    page.goto(path.resolve().as_uri(), wait_until="load")
    if screenshot:
        target = screenshot if isinstance(screenshot, Path) else ARTIFACTS / screenshot
        target.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(target), full_page=True)
    return result
