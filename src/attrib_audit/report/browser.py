"""Check a report the way a reader sees it: open it in headless Chromium, take a screenshot, and
collect console errors, network requests and broken images over the DevTools protocol.

The protocol runs over Chromium's `--remote-debugging-pipe` (NUL-separated JSON on fds 3 and 4),
so no websocket package is needed.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from attrib_audit.errors import BackendError
from attrib_audit.files.outdir import output_file

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
         "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe")
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
WIDTH = 1280
MAX_HEIGHT = 20000  # px; a screenshot taller than this is cut (and says so)

PAGE_FACTS = """JSON.stringify({
  title: document.title,
  height: Math.ceil(document.documentElement.scrollHeight),
  images: Array.from(document.images).map(i => ({scheme: i.src.split(',')[0].slice(0, 40), chars: i.src.length,
                                                complete: i.complete, width: i.naturalWidth, height: i.naturalHeight})),
  svgs: document.querySelectorAll('svg').length,
  sections: Array.from(document.querySelectorAll('section')).map(s => s.id)
})"""


class BrowserError(BackendError):
    """Chromium could not be started or did not answer; the message says what happened (one line, exit 3, as any
    backend failure: the report itself is written before the browser starts)."""


def find_chromium() -> str | None:
    """$ATTRIB_AUDIT_CHROMIUM, else the first Chromium-family browser on PATH."""
    env = os.environ.get("ATTRIB_AUDIT_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    return next((p for p in map(shutil.which, CANDIDATES) if p), None)


@dataclass(kw_only=True)
class PageCheck:
    url: str
    screenshot: Path
    title: str
    height: int
    images: list[dict]
    svgs: int
    sections: list[str]
    console_errors: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)  # requests that are neither file: nor data:

    @property
    def broken_images(self) -> list[dict]:
        return [i for i in self.images if not (i["complete"] and i["width"] > 0 and i["height"] > 0)]

    @property
    def ok(self) -> bool:
        return bool(self.images or self.svgs) and not (self.console_errors or self.network or self.broken_images)

    def summary(self) -> str:
        lines = [f"browser check: {'ok' if self.ok else 'FAILED'} — {len(self.images)} images "
                 f"({len(self.broken_images)} broken), {self.svgs} inline svg, "
                 f"{len(self.console_errors)} console errors, "
                 f"{len(self.network)} network requests; page {WIDTH}x{self.height}px; screenshot: {self.screenshot}"]
        lines += [f"  console: {e}" for e in self.console_errors] + [f"  network: {u}" for u in self.network]
        return "\n".join(lines)


def _above_4(fd: int) -> int:
    """The same pipe end on a descriptor above 4, so moving it onto 3 or 4 cannot clobber the other."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class _DevTools:
    """A minimal DevTools client over the pipe: numbered commands, with events kept for inspection."""

    def __init__(self, exe: str, profile: str):
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()
        to_child, from_child = _above_4(to_child), _above_4(from_child)
        # bash (dash cannot name descriptors above 9) moves our pipe ends to fds 3 (commands in) and 4 (replies out),
        # as --remote-debugging-pipe expects
        script = f'exec "$0" "$@" 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-'
        self.proc = subprocess.Popen([shutil.which("bash") or "/bin/bash", "-c", script, exe, *FLAGS,
                                      f"--user-data-dir={profile}",
                                      f"--window-size={WIDTH},900", "about:blank"],
                                     pass_fds=(to_child, from_child), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_child)
        os.close(from_child)
        self._buf = b""
        self._next = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30) -> dict:
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._out, json.dumps(msg).encode() + b"\0")
        reply = self.wait(lambda m: m.get("id") == self._next, timeout, method)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message', reply['error'])}")
        return reply.get("result", {})

    def wait(self, match, timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" not in msg:
                    self.events.append(msg)
                if match(msg):
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium gave no answer to {what} within {timeout:.0f} s")
            ready, _, _ = select.select([self._in], [], [], left)
            if ready:
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    err = self.proc.stderr.read().decode(errors="replace")[-800:] if self.proc.stderr else ""
                    raise BrowserError(f"Chromium exited (code {self.proc.poll()}) before answering {what}: {err}")
                self._buf += chunk

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                os.write(self._out, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
                self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            for fd in (self._out, self._in):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self.proc.stderr:
                self.proc.stderr.close()


def _console_errors(events: list[dict]) -> list[str]:
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(f"{p['entry'].get('source', '')}: {p['entry'].get('text', '')} "
                       f"{p['entry'].get('url', '')}".strip())
    return out


class Tab:
    """One page of a running Browser: navigate, evaluate JavaScript, press keys, take a screenshot."""

    def __init__(self, tools: _DevTools, timeout: float):
        self._tools, self.timeout = tools, timeout
        target = tools.send("Target.createTarget", {"url": "about:blank"}, timeout=timeout)["targetId"]
        self.session = tools.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable")
        self.resize(900)

    def send(self, method: str, params: dict | None = None) -> dict:
        return self._tools.send(method, params, session=self.session, timeout=self.timeout)

    def resize(self, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})

    def navigate(self, url: str) -> None:
        """Open `url` and wait for its load event."""
        seen = len(self._tools.events)
        self.send("Page.navigate", {"url": url})
        loaded = lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == self.session  # noqa: E731
        if not any(map(loaded, self._tools.events[seen:])):  # it may have come in with the navigate reply
            self._tools.wait(loaded, self.timeout, "the page load")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (promises are awaited)."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise BrowserError(f"JavaScript failed: {reply['exceptionDetails'].get('text', '')} in {expression[:80]}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float | None = None, poll: float = 0.05):
        """Poll a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"page never satisfied {expression!r}")
            time.sleep(poll)

    def press(self, key: str) -> None:
        """A real key press (keydown, char, keyup) as the keyboard sends it; `key` is a character or e.g. ArrowLeft."""
        text = key if len(key) == 1 else ""
        code = f"Key{key.upper()}" if len(key) == 1 and key.isalpha() else (f"Digit{key}" if key.isdigit() else key)
        self.send("Input.dispatchKeyEvent", {"type": "keyDown" if text else "rawKeyDown", "key": key, "code": code,
                                             "text": text})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code})

    def screenshot(self, path: str | Path) -> tuple[Path, int]:
        """Full-page PNG (cut at MAX_HEIGHT); (path, the page's full height)."""
        height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
        clip = min(height, MAX_HEIGHT)
        self.resize(clip)
        shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": 0, "y": 0,
                                                             "width": WIDTH, "height": clip, "scale": 1}})
        path = Path(path)
        with output_file(path, "--screenshot") as tmp:
            tmp.write_bytes(base64.b64decode(shot["data"]))
        return path, height

    def network(self) -> list[str]:
        """Every URL this tab requested."""
        return [e["params"]["request"]["url"] for e in self._tools.events if e.get("sessionId") == self.session
                and e.get("method") == "Network.requestWillBeSent"]

    def console_errors(self) -> list[str]:
        return _console_errors([e for e in self._tools.events if e.get("sessionId") == self.session])


class Browser:
    """Headless Chromium driven over the DevTools pipe; `with Browser() as b: tab = b.new_tab()`."""

    def __init__(self, timeout: float = 60.0):
        exe = find_chromium()
        if not exe:
            raise BrowserError("no Chromium found: install it (Debian: apt-get install chromium) "
                               "or set $ATTRIB_AUDIT_CHROMIUM")
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="attrib-audit-chromium-")
        self._tools = _DevTools(exe, self._profile.name)

    def new_tab(self) -> Tab:
        return Tab(self._tools, self.timeout)

    def close(self) -> None:
        try:
            self._tools.close()
        finally:
            self._profile.cleanup()

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_page(html: str | Path, screenshot: str | Path, *, timeout: float = 60.0) -> PageCheck:
    """Load `html` in headless Chromium, write a full-page PNG to `screenshot`, and report what went wrong."""
    url = Path(html).resolve().as_uri()
    with Browser(timeout) as browser:
        tab = browser.new_tab()
        tab.navigate(url)
        facts = json.loads(tab.evaluate(PAGE_FACTS))
        shot, _ = tab.screenshot(screenshot)
        network = [u for u in tab.network() if not u.startswith(("file:", "data:"))]
        errors = tab.console_errors()
    return PageCheck(url=url, screenshot=shot, title=facts["title"], height=int(facts["height"]),
                     images=facts["images"], svgs=facts["svgs"],
                     sections=facts["sections"], console_errors=errors, network=network)
