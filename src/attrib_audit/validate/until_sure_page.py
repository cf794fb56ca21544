"""The label-until-sure page: the proposed pair, live standings with both kinds of interval, and a stop banner.

It is served by the label server's hardened handler (127.0.0.1 only, host check, per-run token on writes);
the session object is shared by the server's threads behind one lock, so answers are filed one at a time.
"""
from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import urlparse

from attrib_audit.errors import UsageError
from attrib_audit.files.jsonfile import plain
from attrib_audit.validate.label import DEFAULT_PORT, LabelHandler, LabelServer, overlap_segments
from attrib_audit.validate.until_sure import UntilSure

LIVE_BOOT = 200  # resamples of the live fixed-sample intervals, recomputed after every label (final reports use 1,000)

PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attrib-audit · label until sure</title>
<style>
:root { --ink:#1d2430; --muted:#5b6574; --line:#d9dee5; --bg:#f5f7fa; --card:#fff; --hit:#ffe7a3;
        --yes:#1f7a4d; --no:#b3261e; }
* { box-sizing:border-box; }
body { margin:0; font:15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; color:var(--ink);
       background:var(--bg); }
header { background:var(--card); border-bottom:1px solid var(--line); padding:10px 24px; display:flex; gap:18px;
         align-items:center; }
header h1 { font-size:15px; margin:0; }
#count { color:var(--muted); font-size:13px; }
main { max-width:1180px; margin:16px auto; padding:0 24px 40px; display:grid; grid-template-columns:3fr 2fr; gap:16px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 16px;
        margin-bottom:12px; }
.label { font-size:12px; font-weight:600; letter-spacing:.06em; text-transform:uppercase; color:var(--muted); }
#claim { font-size:18px; }
#evidence { max-height:40vh; overflow:auto; white-space:pre-wrap; }
mark { background:var(--hit); color:inherit; }
button { font:inherit; border-radius:6px; padding:8px 14px; cursor:pointer; border:1px solid var(--line);
         background:var(--card); }
button.yes { background:var(--yes); color:#fff; border-color:var(--yes); }
button.no { background:var(--no); color:#fff; border-color:var(--no); }
table { border-collapse:collapse; width:100%; font-size:13px; }
td, th { padding:3px 6px; border-bottom:1px solid var(--line); text-align:left; }
td.n { font-variant-numeric:tabular-nums; white-space:nowrap; }
.note { color:var(--muted); font-size:12px; }
#banner { display:none; grid-column:1 / -1; padding:14px 18px; border-radius:8px; font-size:17px; font-weight:600; }
#banner.best, #banner.tie { display:block; background:#dff3e8; color:var(--yes); border:1px solid var(--yes); }
#banner.budget { display:block; background:#fbe3e1; color:var(--no); border:1px solid var(--no); }
body.over #pair { display:none; }
</style></head>
<body>
<header><h1>attrib-audit · label until sure</h1><span id="count">loading…</span></header>
<main>
  <div id="banner"></div>
  <section id="pair">
    <div class="card"><div class="label">Question</div><div id="question"></div></div>
    <div class="card"><div class="label">Claim</div><div id="claim"></div></div>
    <div class="card"><div class="label">Evidence (highlighted: words shared with the claim)</div>
      <div id="evidence"></div></div>
    <p>Is the claim <b>supported</b> by the evidence alone?
      <button class="yes" data-decision="supported">Supported (S)</button>
      <button class="no" data-decision="not_supported">Not supported (N)</button>
      <button data-decision="skip">Skip (K)</button> <span id="status"></span></p>
  </section>
  <section>
    <div class="card"><div class="label">Standings</div>
      <table><thead><tr><th>metric</th><th>AUROC</th><th>95% CI (fixed-sample, not for stopping)</th>
        <th>λ</th></tr></thead>
        <tbody id="standings"></tbody></table>
      <p class="note" id="proxy"></p></div>
    <div class="card"><div class="label">Paired differences: anytime-valid intervals (the stop rules use these)</div>
      <table><tbody id="pairs"></tbody></table>
      <p class="note" id="decision"></p><p class="note" id="caveats"></p></div>
  </section>
</main>
<script id="config" type="application/json">__CONFIG__</script>
<script>
"use strict";
const cfg = JSON.parse(document.getElementById("config").textContent);
const $ = (id) => document.getElementById(id);
let current = null;
const f3 = (x) => (x === null || x === undefined) ? "—" : x.toFixed(3);
const s3 = (x) => (x === null || x === undefined) ? "—" : (x >= 0 ? "+" : "") + x.toFixed(3);
function fill(el, segments) {
  el.replaceChildren();
  for (const [piece, shared] of segments) {
    if (shared) { const m = document.createElement("mark"); m.textContent = piece; el.appendChild(m); }
    else el.appendChild(document.createTextNode(piece));
  }
}
function row(cells) {
  const tr = document.createElement("tr");
  for (const [text, cls] of cells) { const td = document.createElement("td"); td.textContent = text;
    if (cls) td.className = cls; tr.appendChild(td); }
  return tr;
}
function standings(r) {
  $("count").textContent = `${r.n_labels} labels (${r.n_supported} supported) · budget ${r.budget} · ` +
    `${r.visited} of ${r.pool_size} pairs walked · ${r.sampling} sampling`;
  const order = r.metrics.map((_, i) => i).sort((a, b) => (r.aurocs[b] ?? -1) - (r.aurocs[a] ?? -1));
  $("standings").replaceChildren(...order.map((i) => row([[r.metrics[i]], [f3(r.aurocs[i]), "n"],
    [`[${f3(r.fixed[i].low)}, ${f3(r.fixed[i].high)}]`, "n"], [f3(r.lams[i]), "n"]])));
  $("pairs").replaceChildren(row([["difference"], ["anytime-valid"], ["fixed-sample, not for stopping"]]),
    ...r.pairs.map((p, i) => row([[`${r.metrics[p.a]} − ${r.metrics[p.b]}`],
    [`${s3(p.estimate)} [${s3(p.low)}, ${s3(p.high)}]`, "n"],
    [`[${s3(r.fixed_pairs[i].low)}, ${s3(r.fixed_pairs[i].high)}]`, "n"]])));
  $("proxy").textContent = `proxy ${r.proxy}: ${r.proxy_note}`;
  $("decision").textContent = r.message;
  $("caveats").textContent = r.caveats.join("; ");
  const b = $("banner");
  b.className = ["best", "tie", "budget"].includes(r.decision) ? r.decision : "";
  b.textContent = r.decision === "budget" ? "Stop: " + r.message : (b.className ? "Stop — " + r.message : "");
}
async function api(path, body) {
  const opts = body ? {method: "POST", headers: {"Content-Type": "application/json", "X-Token": cfg.token},
                       body: JSON.stringify(body)} : {};
  const r = await fetch(path, opts);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.status);
  return data;
}
async function next() {
  const d = await api("/api/next");
  standings(d.standings);
  current = d.pair;
  document.body.classList.toggle("over", !current);
  if (!current) return;
  $("question").textContent = current.question || "(no question)";
  fill($("claim"), current.claim);
  fill($("evidence"), current.evidence);
}
async function answer(decision) {
  if (!current) return;
  try { await api("/api/answer", {id: current.id, seq: current.seq, decision}); $("status").textContent = "";
        await next(); }
  catch (e) { $("status").textContent = String(e.message || e); }
}
for (const b of document.querySelectorAll("button[data-decision]"))
  b.addEventListener("click", () => answer(b.dataset.decision));
document.addEventListener("keydown", (e) => {
  const k = {s: "supported", n: "not_supported", k: "skip"}[e.key.toLowerCase()];
  if (k) answer(k);
});
next().catch((e) => { $("status").textContent = String(e.message || e); });
</script></body></html>
"""


def render_until_sure_page(config: dict[str, Any]) -> str:
    """The page with its config (token, file name) inlined as JSON that cannot close the script element."""
    return PAGE.replace("__CONFIG__", json.dumps(config).replace("</", "<\\/"))


class UntilSureServer(LabelServer):
    """The label server bound to one until-sure session."""

    def __init__(self, session: UntilSure, port: int = 0):
        super().__init__(session.pool, session.store, session.annotator, port)
        self.session = session
        self.lock = threading.Lock()
        self.RequestHandlerClass = UntilSureHandler

    def next_payload(self) -> dict[str, Any]:
        """The pair to show now (None once the session is over) and the standings."""
        with self.lock:
            row = self.session.propose()
            report = self.session.report(LIVE_BOOT)
            pair = None
            if row is not None:
                claim, evidence = self.pool.claims[row], self.pool.evidences[row]
                pair = {"id": self.pool.ids[row], "seq": self.session.pending_seq,
                        "question": self.pool.questions[row] or "",
                        "claim": overlap_segments(claim, evidence), "evidence": overlap_segments(evidence, claim)}
            return {"pair": pair, "standings": plain(report.as_json())}


class UntilSureHandler(LabelHandler):
    server: UntilSureServer

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if not self._allowed():
            return
        path = urlparse(self.path).path
        if path == "/":
            page = render_until_sure_page({"token": self.server.token, "file": self.server.pool.path.name})
            self._send(200, page.encode(), "text/html; charset=utf-8")
        elif path == "/api/next":
            self._json(200, self.server.next_payload())
        elif path == "/favicon.ico":
            self._send(204, b"", "image/x-icon")
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        if not self._post_allowed():
            return
        try:
            body = self._json_body()
            if urlparse(self.path).path != "/api/answer" or not isinstance(body, dict):
                raise ValueError("POST /api/answer with a JSON object")
            with self.server.lock:
                s = self.server.session
                if s.pending_row is None or body.get("id") != self.server.pool.ids[s.pending_row] \
                        or body.get("seq") != s.pending_seq:
                    raise ValueError("that pair is not the one waiting for an answer (reload)")
                s.answer(str(body.get("decision")))
        except (ValueError, TypeError, RecursionError) as exc:
            self._json(400, {"error": str(exc)})
            return
        self._json(200, {"ok": True})


def serve_until_sure(session: UntilSure, port: int = DEFAULT_PORT) -> UntilSureServer:
    """A server ready to `serve_forever()`; a busy default port falls back to a free one."""
    try:
        return UntilSureServer(session, port)
    except OSError:
        if port != DEFAULT_PORT:
            raise UsageError(f"port {port} is busy; pass --port 0 for any free port") from None
        return UntilSureServer(session, 0)
