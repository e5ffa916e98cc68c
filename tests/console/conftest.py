"""Fixtures for the console's browser tests: headless Chromium, a real index, real servers.

Chromium and its WebDriver are Debian's (``make system-deps`` installs them as root);
without them, or without selenium, the browser tests skip and say why.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import (
    BROWSER_FLAGS,
    NOTES,
    SAMPLES,
    Served,
    child_environment,
    rcpkit_command,
)


def _browser_missing() -> str | None:
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        return "chromium and chromedriver are not installed (make system-deps, as root)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the dev extra)"
    return None


@pytest.fixture(scope="session")
def browser_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Any]]:
    """Start a fresh headless Chromium (its own profile) at a given window width."""
    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    started: list[Any] = []

    def start(width: int = 1200, height: int = 1400) -> Any:
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "chromium"
        for flag in BROWSER_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--window-size={width},{height}")
        options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(shutil.which("chromedriver") or "chromedriver")
        driver = webdriver.Chrome(service=service, options=options)
        driver.set_page_load_timeout(30)
        driver.set_script_timeout(30)
        started.append(driver)
        return driver

    yield start
    for driver in started:
        driver.quit()


@pytest.fixture(scope="session")
def browser(browser_factory: Callable[..., Any]) -> Any:
    return browser_factory()


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real index (the default MiniLM embedder) of the samples plus a notes folder."""
    root = tmp_path_factory.mktemp("console-corpus")
    corpus = root / "corpus"
    shutil.copytree(SAMPLES, corpus / "guides")
    (corpus / "notes").mkdir()
    for name, text in NOTES.items():
        (corpus / "notes" / name).write_text(text)
    index = root / "index"
    done = subprocess.run(
        rcpkit_command("index", str(corpus), "--index", str(index)),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=child_environment(),
    )
    assert done.returncode == 0, done.stderr
    return index


@pytest.fixture(scope="module")
def serve(corpus_index: Path) -> Iterator[Callable[..., Served]]:
    children: list[Served] = []

    def start(*extra: str, **environment: str) -> Served:
        child = Served(corpus_index, *extra, environment=child_environment(**environment))
        children.append(child)
        return child

    yield start
    for child in children:
        child.stop()
