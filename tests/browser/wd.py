"""A small W3C WebDriver client for the browser tests: chromedriver's HTTP API over httpx.

No Selenium and nothing downloaded: Debian's ``chromium`` and ``chromedriver`` from
``/usr/bin`` (``python3 dev.py install`` installs them as root). ``find_browser`` says why the
browser cannot run here, ``Browser`` starts chromedriver on a free loopback port and one headless
Chromium session with a fresh profile, and stops both. Every wait is a bounded poll of a condition.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = ("chromium", "chromium-browser")
DRIVER = "chromedriver"
WAIT = 60.0
# As root the sandbox cannot start; without the networking flags the browser's own background
# connections are refused here and it stalls.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--lang=en-US",
    "--window-size=1366,768",
]
TAB, ENTER = "\ue004", "\ue007"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C web element key


def find_browser() -> tuple[str, str] | str:
    """(chromium, chromedriver) paths, or the reason they are missing."""
    browser = next((p for name in CHROMIUM if (p := shutil.which(name))), None)
    driver = shutil.which(DRIVER)
    if browser and driver:
        return browser, driver
    missing = [name for name, found in (("chromium", browser), ("chromium-driver", driver)) if not found]
    return f"{' and '.join(missing)} not installed (apt-get install -y chromium chromium-driver)"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class WebDriverError(AssertionError):
    pass


class Browser:
    """One headless Chromium session driven through chromedriver."""

    def __init__(self, browser: str, driver: str) -> None:
        port = _free_port()
        self.profile = tempfile.mkdtemp(prefix="groove-chromium-")
        self.proc = subprocess.Popen(
            [driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=WAIT)
        self._wait_driver()
        options = {"binary": browser, "args": [*FLAGS, f"--user-data-dir={self.profile}"]}
        caps = {
            "browserName": "chrome",
            "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL"},
        }
        self.session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]
        self._call("POST", f"/session/{self.session}/window/rect", {"width": 1366, "height": 768})

    def _wait_driver(self) -> None:
        end = time.monotonic() + WAIT
        while time.monotonic() < end:
            try:
                if self.http.get("/status").json()["value"]["ready"]:
                    return
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        raise WebDriverError("chromedriver did not start")

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        answer = self.http.request(method, path, json=body)
        value = answer.json().get("value")
        if answer.status_code >= 400:
            raise WebDriverError(f"{method} {path}: {value}")
        return value

    def close(self) -> None:
        try:
            self._call("DELETE", f"/session/{self.session}")
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=WAIT)
            self.http.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    # -- the session -----------------------------------------------------------------------------
    def s(self, path: str) -> str:
        return f"/session/{self.session}{path}"

    def go(self, url: str) -> None:
        self._call("POST", self.s("/url"), {"url": url})

    @property
    def url(self) -> str:
        return self._call("GET", self.s("/url"))

    def js(self, script: str, *args: Any) -> Any:
        return self._call("POST", self.s("/execute/sync"), {"script": script, "args": list(args)})

    def wait_for(self, script: str, *args: Any, timeout: float = WAIT) -> Any:
        """Poll ``script`` (a function body returning a value) until it returns something truthy."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = self.js(script, *args)
            if value:
                return value
            time.sleep(0.05)
        raise WebDriverError(f"timed out waiting for: {script}")

    def find(self, css: str) -> str:
        return self._call("POST", self.s("/element"), {"using": "css selector", "value": css})[ELEMENT]

    def find_all(self, css: str) -> list[str]:
        found = self._call("POST", self.s("/elements"), {"using": "css selector", "value": css})
        return [e[ELEMENT] for e in found]

    def click(self, element: str) -> None:
        self._call("POST", self.s(f"/element/{element}/click"), {})

    def type_into(self, element: str, text: str) -> None:
        self._call("POST", self.s(f"/element/{element}/value"), {"text": text})

    def press(self, *keys: str) -> None:
        """Key presses on whatever has the focus (no element chosen: keyboard-only use)."""
        actions = []
        for key in keys:
            actions += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        self._call("POST", self.s("/actions"), {"actions": [{"type": "key", "id": "kb", "actions": actions}]})

    def console(self) -> list[dict[str, Any]]:
        """Browser console entries since the last call (chromedriver's log endpoint)."""
        return self._call("POST", self.s("/se/log"), {"type": "browser"})

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self._call("GET", self.s("/screenshot"))))

    def loaded(self, path_prefix: str) -> None:
        """Wait until the page at ``path_prefix`` has finished loading."""
        self.wait_for(
            "return location.pathname.startsWith(arguments[0]) && document.readyState === 'complete'",
            path_prefix,
        )


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
