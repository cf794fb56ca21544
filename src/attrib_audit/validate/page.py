"""The labelling page: one self-contained HTML document (inline style and script, system fonts, no requests
beyond its own server), so it works offline and nothing leaves the machine."""
from __future__ import annotations

import json

PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attrib-audit · label</title>
<style>
:root { --ink:#1d2430; --muted:#5b6574; --line:#d9dee5; --bg:#f5f7fa; --card:#fff; --hit:#ffe7a3;
        --yes:#1f7a4d; --no:#b3261e; --skip:#5b6574; }
* { box-sizing: border-box; }
body { margin:0; font:16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color:var(--ink); background:var(--bg); }
header { position:sticky; top:0; z-index:2; background:var(--card); border-bottom:1px solid var(--line);
         padding:10px 24px; display:flex; gap:18px; align-items:center; }
header h1 { font-size:15px; margin:0; font-weight:600; white-space:nowrap; }
#file { color:var(--muted); font-size:13px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
.progress { flex:1; min-width:160px; }
.bar { height:8px; background:#e8ecf1; border-radius:4px; overflow:hidden; }
.bar > div { height:100%; width:0; background:var(--yes); transition:width .2s; }
#count { font-size:13px; color:var(--muted); margin-top:2px; }
main { max-width:980px; margin:18px auto; padding:0 24px 140px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 18px;
        margin-bottom:14px; }
.label { font-size:12px; font-weight:600; letter-spacing:.06em; text-transform:uppercase; color:var(--muted);
         margin-bottom:4px; display:flex; justify-content:space-between; }
#claim { font-size:19px; line-height:1.45; }
#claimcard { position:sticky; top:var(--head, 58px); z-index:1; box-shadow:0 2px 6px rgba(0,0,0,.06); }
#question, #claim, #evidence { white-space:pre-wrap; overflow-wrap:anywhere; word-break:break-word; }
#evidence { max-height:52vh; overflow-y:auto; overflow-x:hidden; padding-right:6px; line-height:1.55; }
#note { width:100%; font:inherit; font-size:14px; border:1px solid var(--line); border-radius:6px; padding:6px 8px;
        resize:vertical; min-height:2.2em; }
button.partial { background:#8a5a00; border-color:#8a5a00; color:#fff; }
#more { display:none; margin-top:6px; font-size:13px; color:var(--muted); border-top:1px dashed var(--line);
        padding-top:4px; }
#more.shown { display:block; }
mark { background:var(--hit); color:inherit; border-radius:2px; padding:0 1px; }
#question:empty::before { content:"(no question)"; color:var(--muted); }
.prior { font-size:13px; font-weight:600; padding:2px 8px; border-radius:10px; display:none; text-transform:none;
         letter-spacing:0; }
.prior.supported { display:inline-block; background:#dff3e8; color:var(--yes); }
.prior.not_supported { display:inline-block; background:#fbe3e1; color:var(--no); }
.prior.partial { display:inline-block; background:#fbefd5; color:#8a5a00; }
.prior.skip { display:inline-block; background:#eceff3; color:var(--skip); }
footer { position:fixed; bottom:0; left:0; right:0; background:var(--card); border-top:1px solid var(--line);
         padding:12px 24px; }
.buttons { max-width:980px; margin:0 auto; padding:0 24px; display:flex; gap:10px; align-items:center; }
button { font:inherit; font-size:15px; border-radius:6px; padding:9px 16px; cursor:pointer;
         border:1px solid var(--line); background:var(--card); color:var(--ink); }
button:disabled { opacity:.5; cursor:default; }
button.yes { background:var(--yes); border-color:var(--yes); color:#fff; }
button.no { background:var(--no); border-color:var(--no); color:#fff; }
kbd { font:12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; border:1px solid currentColor;
      border-radius:3px; padding:0 4px; margin-left:6px; opacity:.85; }
.spacer { flex:1; }
#status { font-size:13px; color:var(--muted); }
#status.error { color:var(--no); font-weight:600; }
#done { display:none; text-align:center; padding:60px 20px; }
body.finished #pair, body.finished footer { display:none; }
body.finished #done { display:block; }
</style></head>
<body>
<header>
  <h1>attrib-audit · label</h1>
  <div id="file"></div>
  <div class="progress"><div class="bar"><div id="bar"></div></div><div id="count">loading…</div></div>
</header>
<main>
  <section id="pair" data-index="-1" data-done="0">
    <div class="card"><div class="label"><span>Question</span><span id="pos"></span></div>
      <div id="question"></div></div>
    <div class="card" id="claimcard"><div class="label"><span>Claim</span><span id="prior" class="prior"></span></div>
      <div id="claim"></div></div>
    <div class="card">
      <div class="label"><span>Evidence</span><span>highlighted: content words shared with the claim</span></div>
      <div id="evidence"></div><div id="more">more evidence below: scroll inside this box ↓</div></div>
    <div class="card"><div class="label"><span>Note (optional, saved with your answer)</span></div>
      <textarea id="note" rows="1" maxlength="2000" placeholder="why, or what is unclear"></textarea></div>
    <p id="help" style="color:var(--muted);font-size:14px">Is the claim <b>supported</b> by the evidence alone?
      <b>Partly</b>: some of it is, some is not (your export says what that counts as). Skip what you cannot judge;
      Back revisits the previous pair (a new choice replaces the old one).</p>
  </section>
  <section id="done" class="card"><h2>All pairs are labelled.</h2>
    <p>Export them with <code id="export"></code>, then audit the export.</p>
    <p style="color:var(--muted)">Press <kbd>B</kbd> to go back and change a label.</p></section>
</main>
<footer><div class="buttons">
  <button class="yes" data-decision="supported">Supported<kbd>S</kbd></button>
  <button class="no" data-decision="not_supported">Not supported<kbd>N</kbd></button>
  <button class="partial" data-decision="partial">Partly<kbd>P</kbd></button>
  <button data-decision="skip">Skip<kbd>K</kbd></button>
  <span class="spacer"></span><span id="status"></span>
  <button id="back">Back<kbd>B</kbd></button>
</div></footer>
<script id="config" type="application/json">__CONFIG__</script>
<script>
"use strict";
const cfg = JSON.parse(document.getElementById("config").textContent);
const $ = (id) => document.getElementById(id);
let current = null;              // the pair on screen
let queue = Promise.resolve();   // key presses run one after another, so none is lost
const history = [];              // indices shown before, for Back

function fill(el, segments) {    // text nodes only: pair text can never become markup
  el.replaceChildren();
  for (const [piece, shared] of segments) {
    if (shared) { const m = document.createElement("mark"); m.textContent = piece; el.appendChild(m); }
    else el.appendChild(document.createTextNode(piece));
  }
}
function progress(done, skipped, n) {
  $("bar").style.width = (n ? 100 * done / n : 0) + "%";
  const skips = skipped ? ` (${skipped} skipped)` : "";
  $("count").textContent = `${done} of ${n} done${skips} · ${n - done} remaining · annotator ${cfg.annotator}`;
  $("pair").dataset.done = done;
}
function status(text, error) { $("status").textContent = text; $("status").className = error ? "error" : ""; }
async function api(path, body) {
  const opts = body ? {method: "POST", headers: {"Content-Type": "application/json", "X-Token": cfg.token},
                       body: JSON.stringify(body)} : {};
  const r = await fetch(path, opts);
  const data = await r.json();
  if (r.status === 409) return data;  // another tab labelled this pair first: its label stays, we move on
  if (!r.ok) throw new Error(data.error || r.status);
  return data;
}
async function show(index) {
  const q = new URLSearchParams({annotator: cfg.annotator, i: index});
  const p = await api("/api/pair?" + q);
  current = p;
  progress(p.done, p.skipped, p.n);
  document.body.classList.toggle("finished", p.index >= p.n);
  $("pair").dataset.index = p.index;
  if (p.index >= p.n) return;
  $("pos").textContent = `pair ${p.index + 1} of ${p.n}`;
  $("question").textContent = p.question;
  fill($("claim"), p.claim);
  fill($("evidence"), p.evidence);
  $("evidence").scrollTop = 0;
  const ev = $("evidence");
  $("more").classList.toggle("shown", ev.scrollHeight > ev.clientHeight + 2);
  $("prior").className = "prior " + (p.decision || "");
  $("prior").textContent = p.decision ? "your label: " + p.decision.replace("_", " ") : "";
  $("note").value = p.note || "";
}
function decide(decision) {
  queue = queue.then(async () => {
    if (!current || current.index >= current.n) return;
    const r = await api("/api/label", {annotator: cfg.annotator, index: current.index, id: current.id, decision,
                                        seen: current.decision || null, note: $("note").value || null});
    history.push(current.index);
    if (r.error) status(r.error, true);
    else status(`saved pair ${current.index + 1}: ${decision.replace("_", " ")}`);
    await show(r.next);
  }).catch((e) => status("not saved: " + e.message, true));
}
function back() {
  queue = queue.then(async () => {
    const prev = history.length ? history.pop() : (current && current.index > 0 ? current.index - 1 : null);
    if (prev !== null) { status(""); await show(prev); }
  }).catch((e) => status(e.message, true));
}
const KEYS = {s: "supported", y: "supported", "1": "supported", n: "not_supported", "0": "not_supported",
              p: "partial", k: "skip"};
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.target === $("note")) { if (e.key === "Escape") $("note").blur(); return; }  // typing a note, not answering
  const key = e.key.toLowerCase();
  if (KEYS[key]) { e.preventDefault(); decide(KEYS[key]); }
  else if (key === "b" || e.key === "ArrowLeft" || e.key === "Backspace") { e.preventDefault(); back(); }
});
for (const b of document.querySelectorAll("button[data-decision]")) {
  b.addEventListener("click", () => decide(b.dataset.decision));
}
$("back").addEventListener("click", back);
$("evidence").addEventListener("scroll", (e) => {
  const ev = e.target;
  $("more").classList.toggle("shown", ev.scrollTop + ev.clientHeight < ev.scrollHeight - 2);
});
$("file").textContent = cfg.file;
const sizeHeader = () => document.documentElement.style.setProperty("--head",
  document.querySelector("header").offsetHeight + "px");
window.addEventListener("resize", sizeHeader);
sizeHeader();
$("export").textContent = `attrib-audit label ${cfg.file} --export labelled.jsonl --annotator ${cfg.annotator}`;
queue = queue.then(() => show("resume")).catch((e) => status(e.message, true));
</script>
</body></html>
"""


def render_page(config: dict) -> str:
    """The page with its configuration (token, annotator, file name) as inert JSON."""
    return PAGE.replace("__CONFIG__", json.dumps(config).replace("<", "\\u003c"))
