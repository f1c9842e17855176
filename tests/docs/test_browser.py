"""The documentation site in a real browser: Debian's headless Chromium opens
every chapter, served over HTTP on the loopback address, and each must render
with its navigation (the sidebar listing every chapter, this one marked as
the current one; the page's title) and without a script error (an exception,
a console error), an asset that did not load (a 404 or a failed request) or a
link, among those the rendered page holds (the sidebar's, built by a script,
included), to a page or an anchor that is not there.

Chromium is driven through its DevTools protocol over a pipe
(`--remote-debugging-pipe`: messages of JSON ended by a NUL byte, on its file
descriptors 3 and 4), so no client library is needed. CHROMIUM=/path/to/it
for another browser than the one on the PATH (`make test` installs Debian's
`chromium`).
"""

import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import unquote, urlsplit

import pytest
from conftest import Chapter, Page, chapters

TIMEOUT_S = 30.0
# What the page reports, read once it has loaded and its scripts have run.
INSPECT = """(() => {
  const sidebar = document.querySelector('nav#mdbook-sidebar, nav#sidebar');
  const entries = sidebar ? [...sidebar.querySelectorAll('a[href]')] : [];
  const active = sidebar ? sidebar.querySelector('a.active') : null;
  const box = sidebar ? sidebar.getBoundingClientRect() : null;
  return {
    title: document.title,
    heading: (document.querySelector('main h1') || {}).textContent || null,
    sidebarShown: !!box && box.width > 100 && box.height > 100,
    // An entry's text, less its section number ("2.1. ").
    entries: entries.map((a) => a.textContent.replace(/\\s+/g, ' ').trim().replace(/^(\\d+\\.)+ /, '')),
    active: active ? active.href : null,
    links: [...document.querySelectorAll('a[href]')].map((a) => a.href),
    ready: document.readyState,
  };
})()"""


class Browser:
    """One headless Chromium, one tab, driven over the DevTools pipe."""

    def __init__(self, executable: str, profile: str) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Its descriptors 3 and 4 are the pipe's ends; the shell sets them and is replaced by the browser.
        command = ('exec "$0" --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check '
                   '--disable-extensions --disable-background-networking --disable-dev-shm-usage '
                   '--window-size=1280,900 --user-data-dir="$1" --remote-debugging-pipe about:blank '
                   '3<&0 4>&1 0</dev/null 1>/dev/null')
        self.process = subprocess.Popen(["sh", "-c", command, executable, profile], stdin=to_browser_r,
                                        stdout=from_browser_w, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: List[Dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read(self, deadline: float) -> Dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise EOFError("the browser closed its end of the pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        decoded: Dict[str, Any] = json.loads(message)
        return decoded

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, session: bool = False) -> Dict[str, Any]:
        self._next_id += 1
        message: Dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: Dict[str, Any] = reply["result"]
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str) -> None:
        """Until the tab sends the event `method` (events already read count)."""
        deadline = time.monotonic() + TIMEOUT_S
        while not any(event["method"] == method for event in self.events):
            reply = self._read(deadline)
            if "method" in reply:
                self.events.append(reply)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluating failed: {result['exceptionDetails']}")
        return result["result"]["value"]

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def problems_of(events: List[Dict[str, Any]]) -> List[str]:
    """What went wrong while a page loaded, as the browser reported it."""
    found = []
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            found.append(f"script exception: {details.get('exception', {}).get('description') or details['text']}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            found.append("console error: " + " ".join(str(arg.get("value", arg.get("description")))
                                                    for arg in params["args"]))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            found.append(f"browser error: {entry['text']} {entry.get('url', '')}".strip())
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            found.append(f"HTTP {params['response']['status']}: {params['response']['url']}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            found.append(f"failed to load: {params['errorText']} ({params.get('type')})")
    return found


def chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no chromium on the PATH (apt-get install chromium; `make test` installs it)")
    return path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def site(book: Path) -> Iterator[str]:
    """The built site served on the loopback address: its base URL."""
    handler = functools.partial(_Quiet, directory=str(book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    profile = tempfile.mkdtemp(prefix="chromium-")
    opened = Browser(chromium(), profile)
    try:
        yield opened
    finally:
        opened.close()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(browser: Browser, url: str) -> Tuple[Dict[str, Any], List[str]]:
    """Navigates to `url`, waits for its load and its scripts: what it shows and what went wrong."""
    browser.events.clear()
    navigated = browser.call("Page.navigate", {"url": url}, session=True)
    if navigated.get("errorText"):
        return {}, [f"navigation failed: {navigated['errorText']}"]
    browser.wait_for("Page.loadEventFired")
    shown = browser.evaluate(INSPECT)
    # The sidebar is filled by a script at load; give a slow machine a moment before judging it.
    deadline = time.monotonic() + 5
    while not shown["entries"] and time.monotonic() < deadline:
        time.sleep(0.1)
        shown = browser.evaluate(INSPECT)
    browser.call("Runtime.evaluate", {"expression": "0"}, session=True)  # collects the events sent meanwhile
    return shown, problems_of(browser.events)


CHAPTERS = chapters()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[chapter.page for chapter in CHAPTERS])
def test_the_page_renders_with_its_navigation(site: str, browser: Browser, pages: Dict[str, Page],
                                              chapter: Chapter) -> None:
    shown, problems = open_page(browser, site + chapter.page)
    assert not problems, f"{chapter.page}:\n" + "\n".join(problems)
    assert shown["title"] == f"{chapter.name} - redis-recipes", f"{chapter.page}: title {shown['title']!r}"
    assert shown["heading"], f"{chapter.page}: no heading in its content"
    assert shown["sidebarShown"], f"{chapter.page}: the sidebar is not shown"
    missing = [other.name for other in CHAPTERS if other.name not in shown["entries"]]
    assert not missing, f"{chapter.page}: the sidebar lacks {missing}"
    assert shown["active"] == site + chapter.page, f"{chapter.page}: the sidebar marks {shown['active']!r}"
    broken = []
    for link in shown["links"]:
        if not link.startswith(site):
            continue  # another site: not followed (no network)
        parts = urlsplit(link)
        path = unquote(parts.path[1:]) or "index.html"
        if path not in pages:
            broken.append(f"{link}: no such page")
        elif parts.fragment and unquote(parts.fragment) not in pages[path].ids:
            broken.append(f"{link}: no such anchor")
    assert not broken, f"{chapter.page}: broken links:\n" + "\n".join(sorted(set(broken)))
