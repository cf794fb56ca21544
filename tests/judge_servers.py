"""Real local HTTP servers for the judge tests: llama_cpp.server with SmolLM2, and a small rule-based
OpenAI-compatible server whose answers are known in advance (junk, refusals, 429/5xx, slow replies)."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(model_path: str, *, startup_s: float = 90.0) -> Iterator[str]:
    """`python -m llama_cpp.server` on 127.0.0.1; yields the /v1 base URL, always stopped afterwards."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", model_path, "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "1024", "--n_threads", "1", "--verbose", "False"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + startup_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {proc.stderr.read().decode()[-500:]}")
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError("llama_cpp.server did not start in time") from None
                time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _field(content: str, start: str, end: str) -> str:
    m = re.search(re.escape(start) + r"(.*?)" + re.escape(end), content, re.S)
    return m.group(1) if m else ""


class RuleServer:
    """Answers from token overlap of claim and evidence; markers in the claim pick misbehaviour."""

    def __init__(self, delay_s: float = 0.2) -> None:
        self.delay_s = delay_s
        self.hits: dict[str, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    status, payload, headers = server.answer(body)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                _reply(self, status, payload, headers)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def answer(self, body: dict) -> tuple[int, str, dict]:
        content = body["messages"][-1]["content"]
        claim = _field(content, "Claim:\n", "\n\n")
        evidence = _field(content, "Evidence:\n", "\n\nClaim:")
        with self._lock:
            n = self.hits[claim] = self.hits.get(claim, 0) + 1
        if "[slow]" in claim:
            time.sleep(self.delay_s)
        if "[flaky]" in claim and n <= 2:
            return 503, "overloaded", {}
        if "[busy]" in claim and n == 1:
            return 429, "rate limited", {"Retry-After": "0"}
        if "[bad]" in claim:
            return 400, "bad request", {}
        if "[nonjson]" in claim:
            return 200, "<html>not json</html>", {}
        if "[junk]" in claim:
            text = "lorem ipsum dolor sit amet"
        elif "[over]" in claim:
            text = "SUPPORT: 1.7" if "LABEL:" not in content else "LABEL: attributable\nCONF: 120%"
        elif "[under]" in claim:
            text = "SUPPORT: -0.2" if "LABEL:" not in content else "LABEL: not_attributable\nCONF: -0.5"
        elif "[refuse]" in claim:
            text = "I'm sorry, I cannot help with that."
        else:
            c, e = set(re.findall(r"\w+", claim.lower())), set(re.findall(r"\w+", evidence.lower()))
            overlap = len(c & e) / max(len(c), 1)
            if "Question:" in content:
                overlap = min(1.0, overlap + 0.05)  # lets a test see that the question reached the prompt
            if "LABEL:" in content:
                lab = "attributable" if overlap >= 0.5 else "not_attributable"
                text = f"LABEL: {lab}\nCONF: 0.8"
            else:
                text = f"SUPPORT: {overlap:.2f}"
        reply = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
        return 200, json.dumps(reply), {"Content-Type": "application/json"}

    def __enter__(self) -> "RuleServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _reply(handler: BaseHTTPRequestHandler, status: int, payload: str, headers: dict) -> None:
    handler.send_response(status)
    for k, v in headers.items():
        handler.send_header(k, v)
    data = payload.encode()
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class ScriptedServer:
    """Answers every request with `reply(method, path, headers)` -> (status, body, headers) and records what it saw:
    for the redirect and credential tests (where did the request go, with which Authorization header)."""

    def __init__(self, reply) -> None:
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _any(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                server.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                        "body": body})
                status, payload, headers = reply(self.command, self.path, dict(self.headers))
                _reply(self, status, payload, headers)

            do_GET = do_POST = _any  # noqa: N815

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_reply(text: str) -> tuple[int, str, dict]:
    return 200, json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}), \
        {"Content-Type": "application/json"}
