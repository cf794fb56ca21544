"""`label`: a local page to label sampled pairs, a SQLite store beside the file, and `--export`.

The server binds 127.0.0.1 only, answers only requests addressed to that host (no DNS
rebinding) and takes labels only with the per-run token embedded in its own page (no
cross-site writes). The page loads nothing from elsewhere, so it works offline.
"""
from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from attrib_audit.data.errors import DataError
from attrib_audit.errors import UsageError
from attrib_audit.files.outdir import check_out_file, output_file, staged_dir
from attrib_audit.text.stopwords import STOPWORDS
from attrib_audit.text.tokenize import TOKEN_RE
from attrib_audit.validate.page import render_page
from attrib_audit.validate.sample import Pool, read_pool
from attrib_audit.validate.store import DECISIONS, MAX_NOTE, LabelStore, store_path

DEFAULT_PORT = 8765
MAX_BODY = 16_384
READ_TIMEOUT = 5.0  # seconds a connection may stall mid-request before it is closed (it would hold a thread forever)


def overlap_segments(text: str, other: str) -> list[tuple[str, bool]]:
    """`text` cut into (piece, shared) runs: shared marks content words that also occur in `other`."""
    vocab = {t for t in TOKEN_RE.findall(other.lower()) if t not in STOPWORDS}
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in TOKEN_RE.finditer(text):
        if m.group().lower() in vocab:
            if m.start() > pos:
                out.append((text[pos:m.start()], False))
            out.append((m.group(), True))
            pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    merged: list[tuple[str, bool]] = []
    for piece, hit in out:  # "word word" and "heavy-duty" stay one highlighted run
        if merged and (merged[-1][1] == hit or (not piece.strip(" -") and merged[-1][1])):
            merged[-1] = (merged[-1][0] + piece, merged[-1][1])
        else:
            merged.append((piece, hit))
    return merged


def valid_annotator(name: object) -> str:
    if name is not None and not isinstance(name, str):  # a request body may hold any JSON value
        raise ValueError("annotator must be 1–64 printable characters")
    name = (name or "").strip()
    if not name or len(name) > 64 or not name.isprintable():
        raise ValueError("annotator must be 1–64 printable characters")
    return name


def whole_number(text: str, what: str) -> int:
    """A non-negative decimal from a request (a query or a header); ValueError, a 400 reply, for anything else.
    Past 18 digits it is only "too large": int() of thousands of digits is refused (or slow) by Python itself."""
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{what} must be a whole number, not {text[:20]!r}")
    return int(text) if len(text) <= 18 else 10**18


class LabelServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # listen backlog: the default 5 reset connections under a burst of posts

    def __init__(self, pool: Pool, store: LabelStore, annotator: str, port: int = 0,
                 read_timeout: float = READ_TIMEOUT):
        super().__init__(("127.0.0.1", port), LabelHandler)
        self.pool, self.store, self.annotator = pool, store, annotator
        self.read_timeout = read_timeout
        self.token = secrets.token_urlsafe(24)
        self.hosts = {f"127.0.0.1:{self.server_port}", f"localhost:{self.server_port}"}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/?{urlencode({'annotator': self.annotator})}"

    def next_index(self, annotator: str, after: int) -> int:
        """First pair after `after` this annotator has not decided, wrapping round; len(pool) when all are done."""
        done = self.store.decisions(annotator)
        n = len(self.pool.ids)
        for i in [*range(after + 1, n), *range(0, min(after + 1, n))]:
            if self.pool.ids[i] not in done:
                return i
        return n

    def pair(self, annotator: str, i: int) -> dict:
        done = self.store.decisions(annotator)
        base = {"n": len(self.pool.ids), "done": len(done), "skipped": sum(d == "skip" for d in done.values()),
                "annotator": annotator, "index": i}
        if i >= len(self.pool.ids):
            return base
        claim, evidence = self.pool.claims[i], self.pool.evidences[i]
        entry = self.store.entries(annotator).get(self.pool.ids[i])
        return {**base, "id": self.pool.ids[i], "question": self.pool.questions[i] or "",
                "claim": overlap_segments(claim, evidence), "evidence": overlap_segments(evidence, claim),
                "decision": done.get(self.pool.ids[i]), "note": entry[2] if entry else None}


class LabelHandler(BaseHTTPRequestHandler):
    server: LabelServer

    def setup(self) -> None:
        # StreamRequestHandler.setup puts it on the socket; typeshed calls it a class variable, but setup reads
        # it from the instance
        self.timeout = self.server.read_timeout  # type: ignore[misc]
        super().setup()

    def handle(self) -> None:
        try:
            super().handle()
        except TimeoutError:  # stalled mid-request (a body shorter than its Content-Length): close, no traceback
            self.close_connection = True

    def log_message(self, format, *args) -> None:  # noqa: A002 - the stdlib's name
        pass  # the page is the interface; requests are not news

    def _send(self, code: int, body: bytes, ctype: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; "
                                                    "style-src 'unsafe-inline'; connect-src 'self'")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, code: int, obj: dict) -> None:
        self._send(code, json.dumps(obj, ensure_ascii=False).encode(), "application/json; charset=utf-8")

    def _allowed(self) -> bool:
        if self.headers.get("Host") not in self.server.hosts:
            self._json(403, {"error": "wrong host"})
            return False
        return True

    def _annotator(self, query: dict) -> str:
        return valid_annotator((query.get("annotator") or [self.server.annotator])[0])

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if not self._allowed():
            return
        url = urlparse(self.path)
        query = parse_qs(url.query)
        try:
            annotator = self._annotator(query)
            if url.path == "/":
                self._send(200, render_page({"token": self.server.token, "annotator": annotator,
                                             "file": self.server.pool.path.name}).encode(), "text/html; charset=utf-8")
            elif url.path == "/api/pair":
                raw = (query.get("i") or ["resume"])[0]
                i = self.server.next_index(annotator, -1) if raw == "resume" else whole_number(raw, "pair index")
                if not 0 <= i <= len(self.server.pool.ids):
                    raise ValueError(f"pair index {i} out of range")
                self._json(200, self.server.pair(annotator, i))
            elif url.path == "/favicon.ico":
                self._send(204, b"", "image/x-icon")
            else:
                self._json(404, {"error": "not found"})
        except ValueError as exc:
            self._json(400, {"error": str(exc)})

    def _post_allowed(self) -> bool:
        """A POST from this page's origin carrying the session token; answers the refusal itself otherwise."""
        if not self._allowed():
            return False
        if self.headers.get("X-Token") != self.server.token:
            self._json(403, {"error": "missing or wrong token: reload the page"})
            return False
        return True

    def _json_body(self) -> Any:
        """The POSTed JSON, read within MAX_BODY bytes (ValueError when missing, too large or not JSON)."""
        length = whole_number(self.headers.get("Content-Length") or "0", "Content-Length")
        if not 0 < length <= MAX_BODY:
            raise ValueError("body missing or too large")
        return json.loads(self.rfile.read(length))

    def do_POST(self) -> None:  # noqa: N802
        if not self._post_allowed():
            return
        try:
            body = self._json_body()
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            if not isinstance(body.get("index"), int) or isinstance(body.get("index"), bool):
                raise ValueError("index must be an integer")
            annotator, i, decision = valid_annotator(body.get("annotator")), body["index"], body["decision"]
            if not 0 <= i < len(self.server.pool.ids) or body.get("id") != self.server.pool.ids[i]:
                raise ValueError("index and id do not name the same pair of this file")
            if urlparse(self.path).path != "/api/label" or not isinstance(decision, str) or decision not in DECISIONS:
                raise ValueError("POST /api/label with decision supported, not_supported, partial or skip")
            note = body.get("note")
            if not (note is None or (isinstance(note, str) and len(note) <= MAX_NOTE)):
                raise ValueError(f"note must be text of at most {MAX_NOTE} characters, or null")
            if "seen" in body and not (body["seen"] is None or isinstance(body["seen"], str)):
                raise ValueError("seen must be the decision the page showed (text) or null")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            self._json(400, {"error": str(exc)})
            return
        expect = body["seen"] if "seen" in body else ...  # what the tab showed; another tab may have labelled since
        clash = self.server.store.put(annotator, self.server.pool.ids[i], decision, expect, note=note)
        reply = {"next": self.server.next_index(annotator, i), "done": len(self.server.store.decisions(annotator)),
                 "n": len(self.server.pool.ids)}
        if clash is not None:
            said = (f"was labelled '{clash.stored}' in another tab; kept that label" if clash.stored is not None
                    else "has no stored label, not the one this page showed; nothing saved (reload)")
            self._json(409, {**reply, "error": f"pair {i + 1} {said}", "stored": clash.stored})
            return
        self._json(200, reply)


def serve(pairs_file: str | Path, annotator: str, port: int = DEFAULT_PORT) -> LabelServer:
    """A server ready to `serve_forever()`; a busy default port falls back to a free one."""
    pool = read_pool(pairs_file)
    store = LabelStore(store_path(pairs_file))
    annotator = valid_annotator(annotator)
    try:
        return LabelServer(pool, store, annotator, port)
    except OSError:
        if port != DEFAULT_PORT:
            raise UsageError(f"port {port} is busy; pass --port 0 for any free port") from None
        return LabelServer(pool, store, annotator, 0)


def export(pairs_file: str | Path, out: str | Path, annotator: str | None = None,
           label_map: dict[str, int] | None = None) -> dict:
    """Write the labelled pairs of one annotator in our schema (label, annotator, inclusion_prob kept; a note too).

    A "partial" answer becomes the label `label_map["partial"]` gives; without that mapping the export stops and
    says so (a partly supported claim is 0 under some guidelines and 1 under others: never guessed).
    With two or more annotators, also writes OUT_STEM.annotators/scores.parquet so
    `attrib-audit agree --results that_folder --a A --b B` gives Cohen's κ.

    Raises:
        UsageError: no such annotator, or partial answers without a mapping.
    """
    path = Path(pairs_file)
    store_file = store_path(path)
    if not store_file.exists():
        raise DataError(f"no labels yet ({store_file} does not exist): "
                        f"run `attrib-audit label {path} --annotator NAME`")
    check_out_file(out, "--export", inputs=[path, store_file])  # before the store is opened
    pool = read_pool(path)
    store = LabelStore(store_file)
    names = store.annotators()
    if annotator is None:
        if len(names) != 1:
            raise UsageError(f"{len(names)} annotators in {store_file} ({', '.join(names)}): "
                             "choose one with --annotator")
        annotator = names[0]
    if annotator not in names:
        raise UsageError(f"no labels by {annotator!r} in {store_file} (annotators: {', '.join(names)})")
    rows = store.rows(annotator)
    entries = store.entries(annotator)
    partial = sum(e[0] == "partial" for e in entries.values())
    mapped = (label_map or {}).get("partial")
    if partial and mapped not in (0, 1):
        raise UsageError(f"{partial} pair(s) answered 'partial': say what that means under your guidelines with "
                         "--label-map partial=0 or --label-map partial=1 (never guessed)")
    out = Path(out)
    written = skipped = 0
    # never onto the pool or the label store it reads (`--export pool.jsonl.labels.sqlite` would destroy them)
    with output_file(out, "--export", inputs=[path, store_file]) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for raw, pid in zip(pool.rows, pool.ids):
            if pid not in rows:
                continue
            label, ts = rows[pid]
            decision, _, note = entries[pid]
            if decision == "partial":
                label = mapped
            if label is None:
                skipped += 1
                continue
            stamp = datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")
            extra = {"label_raw": decision} if decision == "partial" else {}
            extra.update({"annotator_note": note} if note else {})
            fh.write(json.dumps({**raw, "label": label, "annotator": annotator, "labelled_at": stamp, **extra},
                                ensure_ascii=False, default=str) + "\n")
            written += 1
    summary = {"out": str(out), "annotator": annotator, "written": written, "skipped": skipped,
               "unlabelled": len(pool.ids) - written - skipped, "annotators": names, "partial": partial,
               "constructs": sorted({str(r["construct"]) for r in pool.rows if r.get("construct")}),
               "weighted": any("inclusion_prob" in r for r in pool.rows), "pool_size": _pool_size(pool)}
    if len(names) > 1:
        summary["agreement_dir"] = str(write_annotator_table(pool, store, names, out.with_suffix(".annotators")))
    return summary


def _pool_size(pool: Pool) -> int | None:
    """The pool a sample was drawn from, as `sample` recorded it (None for a file that is not a sample)."""
    sizes = {r["sample_design"].get("pool_size") for r in pool.rows if isinstance(r.get("sample_design"), dict)}
    return next(iter(sizes)) if len(sizes) == 1 and isinstance(next(iter(sizes)), int) else None


def write_annotator_table(pool: Pool, store: LabelStore, names: list[str], folder: Path) -> Path:
    """Every annotator's labels as `NAME__label` columns of a scores.parquet that `agree` reads."""
    import pandas as pd

    dataset = [str(r.get("dataset") or pool.path.stem) for r in pool.rows]
    frame = pd.DataFrame({"id": pool.ids, "dataset": dataset, "source": [r.get("source") for r in pool.rows],
                          "slice": dataset, "group": [str(r.get("group") or r["id"]) for r in pool.rows]})
    word = {1: "attributable", 0: "not_attributable"}
    for name in names:
        labels = {pid: lab for pid, (lab, _) in store.rows(name).items() if lab is not None}  # a skip is no label
        frame[f"{name}__label"] = [word.get(labels[pid]) if pid in labels else None for pid in pool.ids]
    with staged_dir(folder, "--export", replaces=("scores.parquet",)) as tmp:
        frame.to_parquet(tmp / "scores.parquet", index=False)
    return folder
