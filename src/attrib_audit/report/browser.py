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


class BrowserError(RuntimeError):
    """Chromium could not be started or did not answer; the message says what happened."""


def find_chromium() -> str | None:
    """$ATTRIB_AUDIT_CHROMIUM, else the first Chromium-family browser on PATH."""
    env = os.environ.get("ATTRIB_AUDIT_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    return next((p for p in map(shutil.which, CANDIDATES) if p), None)


@dataclass
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
                 f"({len(self.broken_images)} broken), {self.svgs} inline svg, {len(self.console_errors)} console errors, "
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
        # bash (dash cannot name descriptors above 9) moves our pipe ends to fds 3 (commands in) and 4 (replies out), as --remote-debugging-pipe expects
        script = f'exec "$0" "$@" 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-'
        self.proc = subprocess.Popen([shutil.which("bash") or "/bin/bash", "-c", script, exe, *FLAGS, f"--user-data-dir={profile}",
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
            out.append(f"{p['entry'].get('source', '')}: {p['entry'].get('text', '')} {p['entry'].get('url', '')}".strip())
    return out


def check_page(html: str | Path, screenshot: str | Path, *, timeout: float = 60.0) -> PageCheck:
    """Load `html` in headless Chromium, write a full-page PNG to `screenshot`, and report what went wrong."""
    exe = find_chromium()
    if not exe:
        raise BrowserError("no Chromium found: install it (Debian: apt-get install chromium) or set $ATTRIB_AUDIT_CHROMIUM")
    url = Path(html).resolve().as_uri()
    screenshot = Path(screenshot)
    with tempfile.TemporaryDirectory(prefix="attrib-audit-chromium-") as profile:
        tools = _DevTools(exe, profile)
        try:
            target = tools.send("Target.createTarget", {"url": "about:blank"}, timeout=timeout)["targetId"]
            session = tools.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Network", "Page"):
                tools.send(f"{domain}.enable", session=session)
            tools.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": 900, "deviceScaleFactor": 1,
                                                              "mobile": False}, session=session)
            tools.send("Page.navigate", {"url": url}, session=session)
            tools.wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == session,
                       timeout, "the page load")
            facts = json.loads(tools.send("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True},
                                          session=session)["result"]["value"])
            height = min(int(facts["height"]), MAX_HEIGHT)
            tools.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": height, "deviceScaleFactor": 1,
                                                              "mobile": False}, session=session)
            shot = tools.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                         "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height,
                                                                  "scale": 1}}, session=session, timeout=timeout)
        finally:
            tools.close()
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    network = [e["params"]["request"]["url"] for e in tools.events if e.get("method") == "Network.requestWillBeSent"
               and not e["params"]["request"]["url"].startswith(("file:", "data:"))]
    return PageCheck(url, screenshot, facts["title"], int(facts["height"]), facts["images"], facts["svgs"],
                     facts["sections"], _console_errors(tools.events), network)
