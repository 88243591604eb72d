"""Open an HTML page in real headless Chromium and report what a reader's browser sees.

Why the Chrome DevTools Protocol (CDP) over ``--dump-dom``/``--screenshot``: one browser session
gives the console errors and uncaught exceptions as events, every network request (to prove the
page loads offline: the network is emulated offline and any request other than ``file:`` or
``data:`` is reported), the decode result of every image (``img.decode()`` in the page), the
layout at a fixed 1,400 px viewport (document width and the elements whose box ends past it) and
a full-page screenshot, without editing the page. The client is ``websockets`` (synchronous
API), a small dev dependency; nothing else is installed.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it). :func:`find_chromium`
returns None when none exists, and the tests skip saying why.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

VIEWPORT = 1400
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
PROBE = """(async () => {
  const images = [];
  for (const img of Array.from(document.images)) {
    let decoded = true;
    try { await img.decode(); } catch (e) { decoded = false; }
    images.push({src: img.src.slice(0, 60), alt: img.alt, decoded: decoded && img.naturalWidth > 0,
                 width: img.naturalWidth, height: img.naturalHeight});
  }
  const limit = LIMIT;
  const wide = [];
  for (const el of Array.from(document.body.querySelectorAll('*'))) {
    const r = el.getBoundingClientRect();
    if (r.right > limit + 0.5 && r.width > 0) {
      const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
      wide.push(name + ' right=' + Math.round(r.right));
    }
  }
  return JSON.stringify({scroll_width: document.documentElement.scrollWidth,
                         body_scroll_width: document.body.scrollWidth,
                         height: document.documentElement.scrollHeight,
                         images: images, overflowing: wide.slice(0, 20)});
})()""".replace("LIMIT", str(VIEWPORT))


def find_chromium() -> str | None:
    """The Chromium (or Chrome) binary on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


def skip_reason() -> str | None:
    """Why a browser test cannot run here (None when it can)."""
    if find_chromium() is None:
        return "no headless Chromium on PATH (Debian: apt-get install chromium; .ci/run does)"
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError:
        return "the websockets package (dev extra) is not installed"
    return None


@dataclass
class PageReport:
    """What the browser saw: console errors/exceptions, non-local requests, images, layout."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    images: list[dict] = field(default_factory=list)
    scroll_width: int = 0
    overflowing: list[str] = field(default_factory=list)
    screenshot: Path | None = None


class _Session:
    def __init__(self, ws_url: str) -> None:
        from websockets.sync.client import connect

        self.ws = connect(ws_url, max_size=None, open_timeout=30)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, params: dict | None = None, timeout: float = 60) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"CDP {method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 60) -> None:
        if any(e.get("method") == method for e in self.events):
            return
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            self.events.append(msg)
            if msg.get("method") == method:
                return


def _devtools_port(profile: Path, proc: subprocess.Popen, timeout: float = 60) -> int:
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker.exists() and (lines := marker.read_text().splitlines()):
            return int(lines[0])
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with {proc.returncode} before listening")
        time.sleep(0.1)
    raise RuntimeError("chromium did not open its DevTools port in time")


def _page_ws(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
        targets = json.loads(resp.read())
    return next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")


def _errors(events: list[dict]) -> tuple[list[str], list[str]]:
    errors, external = [], []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console: " + " ".join(str(a.get("value", "")) for a in p["args"]))
        elif m == "Runtime.exceptionThrown":
            errors.append("exception: " + p["exceptionDetails"].get("text", ""))
        elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
            # the URL the entry is about ("Failed to load resource" does not name it in its text)
            url = p["entry"].get("url")
            errors.append("log: " + p["entry"].get("text", "") + (f" [{url}]" if url else ""))
        elif m == "Network.requestWillBeSent":
            url = p["request"]["url"]
            if not url.startswith(("file:", "data:")):
                external.append(url)
    return errors, external


def _inspect(session: _Session, url: str, screenshot: Path | None) -> PageReport:
    for domain in ("Runtime", "Log", "Network", "Page"):
        session.call(f"{domain}.enable")
    session.call(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    session.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": VIEWPORT, "height": 900, "deviceScaleFactor": 1, "mobile": False},
    )
    session.call("Page.navigate", {"url": url})
    session.wait_for("Page.loadEventFired")
    probe = session.call(
        "Runtime.evaluate", {"expression": PROBE, "awaitPromise": True, "returnByValue": True}
    )
    seen = json.loads(probe["result"]["value"])
    errors, external = _errors(session.events)
    report = PageReport(
        url, errors, external, seen["images"], seen["scroll_width"], seen["overflowing"]
    )
    if screenshot is not None:
        shot = session.call(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {
                    "x": 0,
                    "y": 0,
                    "width": VIEWPORT,
                    "height": min(seen["height"], 16000),
                    "scale": 1,
                },
            },
        )
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.write_bytes(base64.b64decode(shot["data"]))
        report.screenshot = screenshot
    return report


def open_page(page: Path, screenshot: Path | None = None) -> PageReport:
    """Load ``page`` (a local HTML file) offline at a 1,400 px viewport in a fresh headless
    Chromium; return what it saw; write a full-page PNG to ``screenshot`` when given."""
    binary = find_chromium()
    if binary is None:
        raise RuntimeError(skip_reason())
    # Chromium's helper processes (crashpad, utility) may still write to the profile for a moment
    # after the browser exits: its whole process group is stopped, and a file they leave behind
    # does not fail the test
    with tempfile.TemporaryDirectory(prefix="tb-chromium-", ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen(
            [
                binary,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={VIEWPORT},900",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            session = _Session(_page_ws(_devtools_port(Path(profile), proc)))
            try:
                return _inspect(session, Path(page).resolve().as_uri(), screenshot)
            finally:
                session.ws.close()
        finally:
            _stop_group(proc)


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop Chromium and every process of its session (SIGTERM, then SIGKILL after 20 s)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=20)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # helpers that outlived the browser


def assert_page_is_sound(report: PageReport) -> None:
    """No console error, nothing fetched from the network, every image decoded, nothing wider
    than the 1,400 px viewport."""
    assert not report.console_errors, f"{report.url}: console errors {report.console_errors}"
    assert not report.external_requests, f"{report.url}: external {report.external_requests}"
    bad = [i for i in report.images if not i["decoded"]]
    assert not bad, f"{report.url}: images that do not decode: {bad}"
    assert report.scroll_width <= VIEWPORT and not report.overflowing, (
        f"{report.url}: the page is {report.scroll_width} px wide at a {VIEWPORT} px viewport; "
        f"overflowing: {report.overflowing}"
    )
