"""A real browser for the page tests: Debian's Chromium driven by Playwright for Python.

Playwright is told which binary to run (``executable_path``), so no browser is ever
downloaded at test time: the browser is the distribution's ``chromium`` package, which
``make test`` installs (tools/ensure_toolchains.sh). ``TTR_CHROMIUM=/path/to/chrome`` picks
another binary. Without one, the page tests skip with the reason; where ``CI`` is set they
fail instead, so a CI run can never pass by skipping them.

Every page a test opens fails the test on an uncaught script error or a ``console.error``:
a page that draws half its content and throws is a broken page even when the assertions
about the other half pass. Screenshots go to ``test-artifacts/screenshots/`` (or
``$TTR_TEST_ARTIFACTS/screenshots``), kept after the run for a person to look at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parent.parent
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The browser binary: ``$TTR_CHROMIUM``, else the first Chromium on PATH."""
    chosen = os.environ.get("TTR_CHROMIUM")
    if chosen:
        return chosen
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
    pytest.skip(f"{message}: run tools/ensure_toolchains.sh (or set TTR_CHROMIUM)")


def artifact_dir() -> Path:
    """Where screenshots are saved (created on first use)."""
    base = Path(os.environ.get("TTR_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    path = base / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole run (starting one costs ~0.5 s)."""
    binary = chromium_path()
    if binary is None:
        _unavailable("the page tests need Chromium (Debian package chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the page tests need Playwright for Python (pip install -e '.[dev]')")
    # Chromium refuses to start as root with its own sandbox on; the tests load only pages
    # this project made.
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=binary, args=args, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page (its own context: no storage shared between tests) that fails the test
    on any script error or console error it reports."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))

    def on_console(message: Any) -> None:
        if message.type == "error":
            errors.append(f"console.error: {message.text}")

    opened.on("console", on_console)
    try:
        yield opened
    finally:
        context.close()
    assert not errors, "the page reported errors:\n" + "\n".join(errors)


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot as ``test-artifacts/screenshots/NAME.png``."""
    path = artifact_dir() / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
