"""Headless Chromium for the tests of the HTML pages (``trace --html``, ``eval --html``).

Debian's ``chromium-headless-shell`` (installed by ``.ci/run`` when it runs as root)
or a full Chromium; tests that need one are marked :data:`needs_browser` and skip,
saying why, where none is installed.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser")


def browser() -> str | None:
    """The first headless Chromium on PATH, or None."""
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


needs_browser = pytest.mark.skipif(
    browser() is None,
    reason="no headless Chromium on PATH (apt-get install chromium-headless-shell; "
    ".ci/run installs it when it runs as root)",
)
"""Skips a test where no headless Chromium is installed."""


def chromium(*args: str, timeout: float = 90.0) -> str:
    """Run headless Chromium (no sandbox: CI runs as root) and return its stdout.

    ``chromium("--dump-dom", uri)`` is the DOM the browser built after loading the
    page; ``chromium(f"--screenshot={png}", "--window-size=W,H", uri)`` draws it.
    """
    path = browser()
    assert path is not None, "no headless Chromium on PATH"
    proc = subprocess.run(
        [
            path,
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            *args,
        ],
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    return proc.stdout.decode("utf-8", "replace")
