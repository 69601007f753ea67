// mindledger's page: plain JavaScript over the /v1 JSON API and the page's /ui/api reads.
// Everything the mind stored is put in the page as text (textContent), never as HTML.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
// What one view draws at most (a 100k-event mind has ~15,000 threads and ~30,000 concepts).
const SHOWN_THREADS = 100, CHARTED_THREADS = 20, SHOWN_CONCEPTS = 200, GRAPH_NODES = 150;
const state = { token: null, mind: null, knowledge: false, budget: {}, verdicts: [], selectors: [] };

// ---- small DOM helpers --------------------------------------------------------------------
function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  return fill(node, attrs, kids);
}
function svg(tag, attrs, ...kids) {
  return fill(document.createElementNS(SVGNS, tag), attrs, kids);
}
function fill(node, attrs, kids) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return node;
}
const put = (parent, ...kids) => fill(parent, {}, kids);  // append, skipping null, flattening lists
const $ = (id) => document.getElementById(id);
const short = (s, n = 12) => (s ? String(s).replace(/-/g, "").slice(0, n) : "");
const num = (x, d = 2) => (x === null || x === undefined ? "" : Number(x).toFixed(d));
const when = (iso) => (iso ? String(iso).replace("T", " ").replace(/(\.\d+)?(\+00:00|Z)$/, "Z") : "");

function table(columns, rows, empty) {
  if (!rows.length) return el("p", { class: "muted", text: empty });
  const head = el("tr", {}, columns.map(([label]) => el("th", { scope: "col", text: label })));
  const body = rows.map((row) =>
    el("tr", {}, columns.map(([, cell, cls]) => {
      const value = cell(row);
      return el("td", { class: cls || null }, value instanceof Node ? value : String(value ?? ""));
    })));
  return el("div", { class: "scroll" }, el("table", {}, el("thead", {}, head), el("tbody", {}, body)));
}

// ---- the API ------------------------------------------------------------------------------
class ApiError extends Error {}

async function api(path, options = {}) {
  const headers = { Authorization: `Bearer ${state.token}`, ...(options.headers || {}) };
  if (options.body) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401) { logout("Your session has ended: log in again."); throw new ApiError("unauthorized"); }
  const data = await response.json().catch(() => null);
  if (!response.ok && !(options.accept || []).includes(response.status)) throw new ApiError((data && data.error && data.error.message) || `HTTP ${response.status}`);
  return data;
}
const mindPath = (rest) => `/v1/minds/${encodeURIComponent(state.mind)}${rest}`;
const uiPath = (rest) => `/ui/api/minds/${encodeURIComponent(state.mind)}${rest}`;

// ---- the owner's changes ----------------------------------------------------------------
// Each change is one POST to the /v1 route whose answer is the CLI's `--json` (close, resolve,
// define, alias, forget); the view is then drawn again from the server. What came of it is
// said in the page's status line, a live region.
function announce(text, bad) {
  const line = $("status");
  line.textContent = text; line.className = bad ? "error" : (text ? "ok" : "");
}

async function change(path, body, said) {
  try {
    const done = await api(mindPath(path), { method: "POST", body: JSON.stringify(body) });
    await route();
    announce(said(done));
    return true;
  } catch (e) {
    if (e.message !== "unauthorized") announce(`Nothing changed: ${e.message}`, true);
    return false;
  }
}

function actionButton(label, what, onclick) {
  const button = el("button", { type: "button", class: "quiet", "data-action": label.toLowerCase(), "aria-label": `${label} ${what}`.trim(), text: label });
  button.addEventListener("click", () => onclick(button));
  return button;
}

// Put a form or a confirmation under what its button acts on: a table row gets a row of its
// own beneath it (the full width of the table), a card gets it at its end.
function place(anchor, node) {
  const row = anchor.closest("tr");
  if (row) {
    const next = row.nextElementSibling;
    if (next && next.classList.contains("work")) next.remove();
    row.after(el("tr", { class: "work" }, el("td", { colspan: row.children.length }, node)));
  } else {
    const card = anchor.closest(".card, .turn, .host, section");
    for (const old of card.querySelectorAll(":scope > .work")) old.remove();
    card.append(el("div", { class: "work" }, node));
  }
  const first = node.querySelector("input, textarea, select, button");
  if (first) first.focus();
}

let fieldCount = 0;
// A small form of labelled fields; `send` gets {name: value} of the fields filled in.
function changeForm(anchor, name, fields, submit, send) {
  const form = el("form", { class: "change", "aria-label": name });
  for (const f of fields) {
    const id = `field-${++fieldCount}`;
    const attrs = { id, name: f.name, required: f.required || false, autocomplete: "off" };
    const input = f.options
      ? el("select", attrs, f.options.map((o) => el("option", { value: o, text: o })))
      : f.long ? el("textarea", { ...attrs, rows: 2, text: f.value || "" }) : el("input", { ...attrs, value: f.value || "" });
    form.append(el("label", { for: id }, f.label, input));
  }
  const cancel = el("button", { type: "button", class: "quiet", text: "Cancel" });
  cancel.addEventListener("click", () => { form.closest(".work").remove(); anchor.focus(); });
  form.append(el("p", {}, el("button", { type: "submit", text: submit }), " ", cancel));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const values = {};
    for (const f of fields) { const v = form.elements.namedItem(f.name).value.trim(); if (v) values[f.name] = v; }
    send(values);
  });
  place(anchor, form);
}

// Forget as `mind forget` does it: a dry run first shows what would go (counts only), and
// only an explicit confirmation forgets.
async function forgetFlow(anchor, selector, value, what) {
  let plan;
  try {
    plan = await api(mindPath("/forget"), { method: "POST", body: JSON.stringify({ selector, value, dry_run: true }) });
  } catch (e) { if (e.message !== "unauthorized") announce(`Nothing changed: ${e.message}`, true); return; }
  if (!plan.keys) { announce(`Nothing to forget for ${what}: already forgotten, or never there.`); return; }
  const confirm = el("button", { type: "button", class: "danger", "data-action": "confirm-forget", text: "Forget for good" });
  const cancel = el("button", { type: "button", class: "quiet", text: "Cancel" });
  const box = el("div", { class: "forget", role: "group", "aria-label": `Forget ${what}` },
    el("p", { class: "forget-plan", text: `Would forget ${what}: ${plan.events} events, ${plan.keys} keys${plan.context_turns ? `, and the sent prompts of ${plan.context_turns} turns that quoted it` : ""}.` }),
    el("ul", {}, Object.entries(plan.counts).map(([kind, n]) => el("li", { text: `${kind}: ${n}` }))),
    plan.unsealed ? el("p", { class: "error", text: `${plan.unsealed} of these events were written before sealing: their words stay in the clear.` }) : null,
    el("p", { class: "muted", text: "This cannot be undone: the words' keys are destroyed and every copy is rebuilt without them. The ledger still verifies and records that something was forgotten (counts, never the content)." }),
    el("p", {}, confirm, " ", cancel));
  confirm.addEventListener("click", () => {
    confirm.disabled = true;
    change("/forget", { selector, value }, (done) => `Forgot ${what}: ${done.events} events, ${done.keys} keys destroyed.`)
      .then((done) => { confirm.disabled = done; });
  });
  cancel.addEventListener("click", () => { box.closest(".work").remove(); announce(`Kept ${what}: nothing was forgotten.`); anchor.focus(); });
  place(anchor, box);
}

// ---- login --------------------------------------------------------------------------------
function firstMind(data) {
  const list = Array.isArray(data) ? data : (data && data.minds) || [];
  const first = list[0];
  return typeof first === "string" ? first : first && first.name;
}

async function loginWith(token) {
  const response = await fetch("/v1/minds", { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw new ApiError("That token opens no mind on this server.");
  const mind = firstMind(await response.json());
  if (!mind) throw new ApiError("That token opens no mind on this server.");
  return mind;
}

function remember(token, mind) {
  state.token = token; state.mind = mind;
  sessionStorage.setItem("mindledger", JSON.stringify({ token, mind }));
}

function logout(message) {
  sessionStorage.removeItem("mindledger");
  state.token = state.mind = null;
  $("nav").hidden = true;
  $("view").replaceChildren();
  $("mind-name").textContent = "mindledger";
  $("login").hidden = false;
  announce("");
  $("login-error").textContent = message || "";
  $("token").focus();
}

async function start() {
  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    try { remember(token, await loginWith(token)); $("token").value = ""; await enter(); }
    catch (e) { $("login-error").textContent = e.message; }
  });
  $("logout").addEventListener("click", () => logout("Logged out."));
  window.addEventListener("hashchange", () => { if (state.token) { announce(""); route(); } });
  const link = location.hash.match(/^#login=([\w-]+)$/);
  if (link) {
    history.replaceState(null, "", location.pathname + "#chat");
    const response = await fetch("/ui/login", { method: "POST", body: JSON.stringify({ nonce: link[1] }), headers: { "Content-Type": "application/json" } });
    const data = await response.json().catch(() => ({}));
    if (response.ok) remember(data.token, data.mind);
    else return logout((data.error && data.error.message) || "This login link does not work.");
  } else {
    const kept = JSON.parse(sessionStorage.getItem("mindledger") || "null");
    if (kept) { state.token = kept.token; state.mind = kept.mind; }
  }
  if (!state.token) return logout();
  await enter();
}

async function enter() {
  $("login").hidden = true; $("login-error").textContent = "";
  $("nav").hidden = false;
  $("mind-name").textContent = state.mind;
  document.title = `${state.mind} · mindledger`;
  try {
    const features = await api(uiPath("/features"));
    state.knowledge = features.knowledge;
    state.budget = features.budget;  // the server's budget rule: default and floors
    state.verdicts = features.thread_verdicts;
    state.selectors = features.forget_selectors;
  } catch (e) { state.knowledge = false; state.budget = {}; state.verdicts = []; state.selectors = []; }
  $("nav-knowledge").hidden = !state.knowledge;
  await route();
}

// ---- routing ------------------------------------------------------------------------------
const VIEWS = {};
async function route() {
  let name = location.hash.slice(1) || "chat";
  if (!VIEWS[name] || (name === "knowledge" && !state.knowledge)) name = "chat";
  for (const a of document.querySelectorAll("nav a")) {
    if (a.getAttribute("href") === `#${name}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const view = $("view");
  view.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
  const section = el("section", { "aria-labelledby": "view-title", "data-view": name });
  try { await VIEWS[name](section); }
  catch (e) { if (e.message !== "unauthorized") put(section, el("p", { class: "error", role: "alert", text: e.message })); }
  if (!state.token) return;
  view.replaceChildren(section);
  performance.mark(`rendered:${name}`);  // bench/web.py reads when each view was whole
  const title = section.querySelector("h2");
  if (title && document.activeElement !== $("message")) { title.tabIndex = -1; title.focus({ preventScroll: true }); }
}
const title = (text) => el("h2", { id: "view-title", text });

// ---- chat ---------------------------------------------------------------------------------
VIEWS.chat = async (section) => {
  const turns = await api(uiPath("/turns?limit=20"));
  const list = el("div", { id: "turns", "aria-label": "Turns" });
  for (const t of turns) list.append(turnCard(t));
  const message = el("textarea", { id: "message", name: "message", required: true, "aria-describedby": "message-keys" });
  const form = el("form", { id: "chat-form", "aria-label": "Send a message" },
    el("label", { for: "message", text: "Message" }),
    message,
    el("p", { class: "muted", id: "message-keys", text: "Enter sends; Shift+Enter starts a new line." }),
    el("details", {}, el("summary", { text: "Model options" }),
      el("label", { for: "model", text: "Model (blank: the mind's model; mock needs a scripted reply)" }),
      el("input", { id: "model", name: "model", autocomplete: "off" }),
      el("label", { for: "mock-reply", text: "Scripted reply (with model mock)" }),
      el("textarea", { id: "mock-reply", name: "mock_reply" }),
      el("label", { for: "budget", text: "Memory budget (tokens)" }),
      el("input", { id: "budget", name: "budget", type: "number", min: state.budget.turn_floor, value: state.budget.default })),
    el("p", {}, el("button", { type: "submit", id: "send", text: "Send" })));
  form.addEventListener("submit", (event) => { event.preventDefault(); send(form, list); });
  message.addEventListener("keydown", (event) => {
    // Enter sends (not while an input method composes a word); Shift+Enter is a new line.
    if (event.key !== "Enter" || event.shiftKey || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    event.preventDefault();
    if (!$("send").disabled) form.requestSubmit();
  });
  // Each finished reply is read out once, whole (the streaming text is not a live region).
  const live = el("p", { id: "reply-live", class: "sr-only", role: "status", "aria-live": "polite" });
  put(section, title(`Chat with ${state.mind}`), list, live, form);
  if (!turns.length) list.append(el("p", { class: "muted", id: "no-turns", text: "No turns yet: say something." }));
};

function turnCard(t) {
  const failed = t.status === "failed";
  const card = el("article", { class: `turn${failed ? " failed" : ""}`, "data-turn": t.turn });
  if (t.text || !t.tool_results) card.append(el("p", { class: "said" }, el("b", { text: "You: " }), t.text || ""));
  if (t.tool_results) card.append(el("div", { class: "said tool-results" }, el("b", { text: `Tool results${t.follows ? ` for the calls of turn ${short(t.follows)}` : ""}: ` }), toolList(t.tool_results, resultLine)));
  if (failed) {
    card.append(el("p", { class: "said error", role: "status" },
      el("b", { text: "Generation failed: " }),
      `${t.failure_kind || t.failure && t.failure.kind || ""} — ${typeof t.failure === "string" ? t.failure : (t.failure && t.failure.message) || ""} (your message is kept in the ledger)`));
  } else if (t.reply || !t.tool_calls) {  // a reply that only calls tools says nothing
    card.append(el("p", { class: "said reply" }, el("b", { text: `${state.mind}: ` }), t.reply ?? ""));
  }
  if (t.tool_calls) card.append(el("div", { class: "said tool-calls" }, el("b", { text: `${state.mind} calls: ` }), toolList(t.tool_calls, callLine)));
  const facts = [`turn ${t.seq ?? ""}`, t.status, t.model, t.cut_off ? "cut off" : null].filter(Boolean);
  card.append(el("p", { class: "muted" }, facts.join(" · "), " ",
    actionButton("Forget", `turn ${t.seq ?? short(t.turn)}`, (b) => forgetFlow(b, "turn", t.turn, `turn ${t.seq ?? short(t.turn)}`))));
  const more = el("details", { class: "why" }, el("summary", { text: "Why: context, changes, rejections" }));
  more.addEventListener("toggle", async () => {
    if (!more.open || more.dataset.loaded) return;
    more.dataset.loaded = "1";
    try { more.append(turnDetail(await api(uiPath(`/turns/${t.turn}`)))); }
    catch (e) { more.append(el("p", { class: "error", text: e.message })); }
  });
  card.append(more);
  return card;
}

// A turn's tool use (decision 0022), as text like all stored words: a call is its function's
// name and arguments, a result its call's id and content. A forgotten list is one placeholder.
const callLine = (c) => `${c.function && c.function.name}(${c.function && c.function.arguments})`;
const resultLine = (r) => `${r.tool_call_id}: ${r.content}`;
function toolList(items, line) {
  if (!Array.isArray(items)) return String(items);
  return el("ul", { class: "tools" }, items.map((item) => el("li", { text: line(item) })));
}

function turnDetail(d) {
  const box = el("div", { class: "detail" });
  box.append(el("h3", { text: `Context: ${d.context.length} items, ${d.context_tokens ?? 0} tokens` }),
    table([["rank", (i) => i.rank, "num"], ["kind", (i) => i.kind], ["channel", (i) => i.channel],
      ["reason", (i) => i.reason], ["score", (i) => num(i.score, 4), "num"], ["tokens", (i) => i.tokens, "num"],
      ["text", (i) => i.text ?? "(not from the ledger)"]], d.context, "No memory was put in front of the model."));
  box.append(el("h3", { text: "What its control lines did" }),
    table([["position", (e) => e.position, "num"], ["event", (e) => e.type.replace(/^mind\./, "")],
      ["details", (e) => payloadLine(e.payload)]], d.effects, "Nothing: no control line changed the mind."));
  if (d.claims.length) {
    box.append(el("h3", { text: "Claims" }),
      table([["type", (c) => c.claim_type], ["payload", (c) => JSON.stringify(c.payload)]], d.claims, ""));
  }
  if (d.tool_calls) {
    box.append(el("h3", { text: "Tool calls its reply made" }), Array.isArray(d.tool_calls)
      ? table([["id", (c) => c.id], ["function", (c) => c.function && c.function.name], ["arguments", (c) => c.function && c.function.arguments]], d.tool_calls, "")
      : el("p", { text: String(d.tool_calls) }));
  }
  if (d.tool_results) {
    box.append(el("h3", { text: "Tool results that were its message" }),
      d.follows ? el("p", { class: "follows", text: `They answer the calls of turn ${d.follows}.` }) : el("p", { class: "muted", text: "They answer no call this mind made." }),
      Array.isArray(d.tool_results)
        ? table([["call", (r) => r.tool_call_id], ["content", (r) => r.content]], d.tool_results, "")
        : el("p", { text: String(d.tool_results) }));
  }
  box.append(el("h3", { text: "Rejected lines" }),
    table([["line", (r) => r.line], ["reason", (r) => r.reason]], d.rejections, "None."));
  if (d.failure) box.append(el("p", { class: "error", text: `Generation failed (${d.failure_kind}): ${d.failure}` }));
  return box;
}

function payloadLine(p) {
  if (!p) return "";
  return Object.entries(p).filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && !v.length))
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join("; ");
}

async function send(form, list) {
  const text = $("message").value;
  if (!text.trim()) return;
  const body = { text, stream: true };
  const model = $("model").value.trim();
  const mock = $("mock-reply").value;
  if (model) body.model = model;
  if (mock) body.mock_reply = mock;
  const budget = parseInt($("budget").value, 10);
  if (budget) body.budget = budget;
  $("send").disabled = true;
  const none = $("no-turns"); if (none) none.remove();
  const reply = el("span", { class: "streaming" });
  const pending = el("article", { class: "turn", "aria-busy": "true" },
    el("p", { class: "said" }, el("b", { text: "You: " }), text),
    el("p", { class: "said reply" }, el("b", { text: `${state.mind}: ` }), reply));
  list.append(pending);
  try {
    const response = await fetch(mindPath("/turns"), {
      method: "POST", body: JSON.stringify(body),
      headers: { Authorization: `Bearer ${state.token}`, "Content-Type": "application/json", Accept: "text/event-stream" },
    });
    if (response.status === 401) return logout("Your session has ended: log in again.");
    if (!response.ok) {
      const data = await response.json().catch(() => null);
      throw new ApiError((data && data.error && data.error.message) || `HTTP ${response.status}`);
    }
    let finished = null;
    await readEvents(response, (event, data) => {
      if (event === "delta") reply.textContent += data.text || "";
      else if (event === "turn") finished = data;
      else if (event === "error" && (data.mind_turn || data.turn)) finished = data.mind_turn || data.turn;  // recorded, as failed
      else if (event === "error") throw new ApiError((data.error && data.error.message) || data.error || "the turn failed");
    });
    if (!finished) throw new ApiError("the stream ended before the turn did");
    const card = turnCard({ ...finished, text, failure_kind: finished.failure && finished.failure.kind });
    pending.replaceWith(card);
    $("reply-live").textContent = finished.status === "failed"
      ? `Generation failed: ${(finished.failure && finished.failure.message) || ""}`
      : `${state.mind}: ${finished.reply ?? ""}`;
    $("message").value = "";
  } catch (e) {
    pending.classList.add("failed");
    pending.append(el("p", { class: "error", role: "alert", text: `The turn failed: ${e.message} (your message is kept in the ledger if it reached the mind)` }));
    $("reply-live").textContent = "";
  } finally {
    pending.removeAttribute("aria-busy");
    $("send").disabled = false;
    $("message").focus();
  }
}

async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = done ? "" : blocks.pop();
    for (const block of blocks) {
      let event = "message"; const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(event, JSON.parse(data.join("\n")));
    }
    if (done) return;
  }
}

// ---- ledger -------------------------------------------------------------------------------
VIEWS.ledger = async (section) => {
  const result = el("p", { class: "verify", id: "verify-result", role: "status" });
  const verify = el("button", { type: "button", id: "verify", text: "Verify the ledger" });
  verify.addEventListener("click", async () => {
    result.textContent = "Verifying…"; result.className = "verify";
    try {
      const answer = await api(mindPath("/verify"), { method: "POST", body: "{}", accept: [409] });
      const v = answer.mind_verify || answer;  // a failed check: the one error, the result beside it
      if (v.ok) { result.textContent = `OK: ${v.events} events verified, head ${short(v.head, 16)}`; result.classList.add("ok"); }
      else if (v.first_bad !== null && v.first_bad !== undefined) { result.textContent = `BROKEN at position ${v.first_bad}: ${v.reason} (${v.events} events verified before it)`; result.classList.add("error"); }
      else { result.textContent = `BROKEN: ${v.reason} (${v.events} events verified)`; result.classList.add("error"); }
      // An anchor kept in a file is named for what it is, not by the server's path to it.
      const anchor = (source) => (/[\\/]/.test(source) ? "head record" : source);
      for (const a of v.anchors || []) result.append(el("span", { class: "muted", text: ` · anchor ${anchor(a.source)}: ${a.status}` }));
    } catch (e) { result.textContent = `Verify failed: ${e.message}`; result.classList.add("error"); }
  });
  const kind = el("select", { id: "f-kind", name: "kind" }, el("option", { value: "", text: "any" }));
  const form = el("form", { class: "filters", "aria-label": "Filter events" },
    el("label", { for: "f-kind" }, "Kind", kind),
    el("label", { for: "f-aggregate" }, "Aggregate id", el("input", { id: "f-aggregate", name: "aggregate", autocomplete: "off" })),
    el("label", { for: "f-since" }, "From", el("input", { id: "f-since", name: "since", type: "datetime-local" })),
    el("label", { for: "f-until" }, "To", el("input", { id: "f-until", name: "until", type: "datetime-local" })),
    el("label", { for: "f-q" }, "Search", el("input", { id: "f-q", name: "q", type: "search" })),
    el("button", { type: "submit", text: "Show" }));
  const rows = el("div", { id: "events" });
  const more = el("button", { type: "button", class: "quiet", text: "Older events", hidden: true });
  let before = null;
  const load = async (reset) => {
    const params = new URLSearchParams({ limit: "100" });
    const field = (name) => form.elements.namedItem(name).value;  // the form is not in the page yet at first
    for (const key of ["kind", "aggregate", "q"]) if (field(key)) params.set(key, field(key));
    for (const key of ["since", "until"]) if (field(key)) params.set(key, new Date(field(key)).toISOString());
    if (!reset && before) params.set("before", before);
    const page = await api(uiPath(`/events?${params}`));
    if (kind.options.length === 1) for (const k of page.kinds) kind.append(el("option", { value: k, text: k }));
    const shown = eventsTable(page.events);
    if (reset) rows.replaceChildren(shown); else rows.append(shown);
    before = page.next_before; more.hidden = !before;
  };
  form.addEventListener("submit", async (event) => { event.preventDefault(); try { await load(true); } catch (e) { rows.replaceChildren(el("p", { class: "error", text: e.message })); } });
  more.addEventListener("click", () => load(false));
  put(section, title("Ledger"), el("p", {}, verify), result, forgetAny(), form, rows, more);
  await load(true);
};

// `mind forget --SELECTOR VALUE` for what no view lists (a speaker, a conversation, a time).
function forgetAny() {
  const kind = el("select", { id: "forget-kind", name: "selector" }, (state.selectors || []).map((k) => el("option", { value: k, text: k })));
  const value = el("input", { id: "forget-value", name: "value", required: true, autocomplete: "off" });
  const go = el("button", { type: "submit", class: "quiet", text: "Show what would go" });
  const form = el("form", { class: "filters", "aria-label": "Forget" },
    el("label", { for: "forget-kind" }, "Forget by", kind),
    el("label", { for: "forget-value" }, "Id, name or ISO time", value), go);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    forgetFlow(go, kind.value, value.value.trim(), `${kind.value} ${value.value.trim()}`);
  });
  return el("details", { class: "host" }, el("summary", { text: "Forget…" }), form);
}

function eventsTable(events) {
  return table([
    ["position", (e) => e.position, "num"],
    ["time", (e) => when(e.time)],
    ["event", (e) => el("details", {}, el("summary", { text: e.type.replace(/^mind\./, "") }),
      el("pre", { text: JSON.stringify(e.payload, null, 2) }),
      el("p", { class: "muted", text: `aggregate ${e.aggregate} v${e.version}` }),
      el("p", { class: "muted", text: `hash ${e.hash}` }))],
    ["aggregate", (e) => short(e.aggregate, 8)],
    ["hash", (e) => short(e.hash, 12)],
  ], events, "No events match.");
}

// ---- commitments --------------------------------------------------------------------------
VIEWS.commitments = async (section) => {
  const [open, closed] = await Promise.all([
    api(uiPath("/commitments?status=open&limit=200")), api(uiPath("/commitments?status=closed&limit=200"))]);
  const by = (turn, position) => (turn ? `turn ${turn}` : position ? "a command" : "");
  const columns = [
    ["id", (c) => c.cid], ["episode", (c) => c.episode, "num"], ["text", (c) => c.text],
    ["opened", (c) => `${when(c.opened_at)} by ${c.origin || "?"}${c.opened_in_turn ? ` (turn ${c.opened_in_turn})` : ""}`],
  ];
  const closedColumns = [...columns,
    ["closed", (c) => `${when(c.closed_at)} by ${by(c.closed_in_turn, c.closed_position)}`],
    ["reason", (c) => c.close_reason || ""]];
  const shown = (page, what) => (page.rows.length < page[what] ? el("p", { class: "muted", text: `The first ${page.rows.length} of ${page[what]}.` }) : null);
  const forget = (c) => actionButton("Forget", c.cid, (b) => forgetFlow(b, "commitment", c.cid, `commitment ${c.cid}`));
  const close = (c) => actionButton("Close", c.cid, (b) => changeForm(b, `Close ${c.cid}`,
    [{ name: "reason", label: "Why (done, dropped...; optional)" }], "Close the commitment",
    (v) => change(`/commitments/${encodeURIComponent(c.cid)}/close`, v, (done) => `Closed ${done.cid}: ${done.text}`)));
  const actions = (buttons) => ["actions", (c) => el("div", { class: "actions", role: "group", "aria-label": `Actions on ${c.cid}` }, buttons.map((b) => b(c)))];
  put(section, title("Commitments"),
    el("h3", { text: `Open (${open.open})` }), shown(open, "open"), table([actions([close, forget]), ...columns], open.rows, "No open commitments."),
    el("h3", { text: `Closed (${closed.closed})` }), el("p", { class: "muted", text: "Latest closed first." }), shown(closed, "closed"),
    table([actions([forget]), ...closedColumns], closed.rows, "None closed yet."));
};

// ---- threads ------------------------------------------------------------------------------
VIEWS.threads = async (section) => {
  const all = location.search.includes("resolved=1");
  const page = await api(uiPath(`/threads?limit=${SHOWN_THREADS}${all ? "&all=1" : ""}`));
  const threads = page.threads;
  const charted = threads.slice(0, CHARTED_THREADS);
  const query = charted.map((t) => `thread=${encodeURIComponent(t.stream_id)}`).join("&");
  const curves = charted.length ? await api(uiPath(`/tension?${query}`)) : {};
  const list = el("ol", { class: "cards", id: "thread-list" });
  for (const t of threads) {
    list.append(el("li", { class: "card", "data-thread": t.id },
      el("h3", {}, `${t.label} `, el("span", { class: `badge${t.status === "resolved" ? "" : " open"}`, text: t.status })),
      el("p", { class: "muted", text: `${t.id} · tension ${num(t.tension)} · ${num(t.hours_unworked, 1)} h unworked · ${t.mentions ?? 0} mentions · ${t.work_count ?? 0} credited works · opened by ${t.origin}` }),
      t.content ? el("p", { class: "said", text: t.content }) : null,
      curves[t.stream_id] ? chart(curves[t.stream_id], t.label) : null,
      el("div", { class: "actions", role: "group", "aria-label": `Actions on thread ${t.id}` },
        t.status === "resolved" ? null : actionButton("Resolve", t.id, (b) => resolveForm(b, t)),
        actionButton("Forget", t.id, (b) => forgetFlow(b, "thread", t.id, `thread ${t.id}`)))));
  }
  const scope = all ? "All threads" : "Live threads";
  const counted = page.total > threads.length ? ` (the first ${threads.length} of ${page.total})` : ` (${page.total})`;
  put(section, title("Threads by tension"),
    el("p", { class: "muted", text: `${scope}${counted}, highest tension first. Charts (the first ${CHARTED_THREADS}): tension over time, computed by the server.` }),
    el("p", {}, el("a", { href: all ? "?#threads" : "?resolved=1#threads", text: all ? "Live threads only" : "Include resolved threads" })),
    threads.length ? list : el("p", { class: "muted", text: "No threads." }));
};

function resolveForm(anchor, t) {
  changeForm(anchor, `Resolve ${t.id}`, [
    { name: "verdict", label: "Verdict", options: state.verdicts, required: true },
    { name: "reason", label: "Reason (needed for dissolved and abandoned)" },
    { name: "artifact", label: "Artifact: a path or event id (needed for answered and superseded)" },
    { name: "by", label: "Superseding thread id (for superseded)" },
  ], "Resolve the thread", (v) => change(`/threads/${encodeURIComponent(t.id)}/resolve`, v, (done) => `Resolved ${done.id} as ${done.verdict}.`));
}

function chart(points, label) {
  const w = 360, h = 80, pad = 14;
  const max = Math.max(...points.map((p) => p[1]), 0.01);
  const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(points.length - 1, 1);
  const y = (v) => h - pad - (v / max) * (h - 2 * pad);
  const d = points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
  const last = points[points.length - 1];
  return svg("svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, role: "img",
    "aria-label": `Tension of ${label} from ${when(points[0][0])} (${points[0][1]}) to ${when(last[0])} (${last[1]})` },
  svg("line", { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad }),
  svg("path", { d }),
  svg("text", { x: pad, y: 10, text: `max ${num(max)}` }),
  svg("text", { x: pad, y: h - 2, text: when(points[0][0]).slice(0, 10) }),
  svg("text", { x: w - pad, y: h - 2, "text-anchor": "end", text: when(last[0]).slice(0, 10) }));
}

// ---- concepts -----------------------------------------------------------------------------
VIEWS.concepts = async (section) => {
  const page = await api(uiPath(`/concepts?limit=${SHOWN_CONCEPTS}&edges=${GRAPH_NODES * 2}`));
  const concepts = page.concepts;
  const detail = el("div", { id: "concept-detail", "aria-live": "polite" });
  const showVersions = async (token) => {
    detail.replaceChildren(el("h3", { text: `Versions of ${token}` }));
    try {
      const versions = await api(uiPath(`/concepts/${encodeURIComponent(token)}/versions`));
      detail.append(table([["position", (v) => v.position, "num"], ["time", (v) => when(v.time)],
        ["change", (v) => v.type.replace(/^mind\.concept\./, "")], ["details", (v) => payloadLine(v.payload)]], versions, "No changes."));
    } catch (e) { detail.append(el("p", { class: "error", text: e.message })); }
  };
  const define = (token, definition) => change(`/concepts/${encodeURIComponent(token)}/define`, { definition },
    (done) => `Defined ${done.token} (version ${done.version}).`);
  const fresh = el("div", { class: "host" }, actionButton("New concept", "", (b) => changeForm(b, "Define a new concept", [
    { name: "token", label: "Concept (lowercase dotted words, like garden.beds)", required: true },
    { name: "definition", label: "Definition", long: true, required: true }],
  "Define", (v) => define(v.token, v.definition))));
  put(section, title("Concepts"), fresh);
  if (!concepts.length) { put(section, el("p", { class: "muted", text: "No concepts yet." })); return; }
  const related = page.relations;
  put(section, el("h3", { text: "Relations" }),
    related.length ? [
      el("p", { class: "muted", text: "Drag a node, or Tab to it and press Enter to show its versions; arrow keys move it." }),
      conceptGraph(related, showVersions)] : el("p", { class: "muted", text: "No relations yet (RELATE: a -> relation -> b)." }),
    detail,
    el("h3", { text: `Definitions (${page.total})` }),
    page.total > concepts.length ? el("p", { class: "muted", text: `The first ${concepts.length} by name; Recall or the Ledger's search finds the others.` }) : null,
    table([["concept", (c) => el("button", { type: "button", class: "quiet", onclick: () => showVersions(c.token), text: c.token })],
      ["definition", (c) => c.definition], ["version", (c) => c.version, "num"],
      ["aliases", (c) => (c.aliases || []).join(", ")],
      ["relations", (c) => (c.relations || []).map((r) => `${r.relation} → ${r.target}`).join("; ")],
      ["actions", (c) => el("div", { class: "actions", role: "group", "aria-label": `Actions on ${c.token}` },
        actionButton("Define", c.token, (b) => changeForm(b, `Define ${c.token}`,
          [{ name: "definition", label: `New definition of ${c.token}`, long: true, required: true, value: c.definition }],
          "Save the definition", (v) => define(c.token, v.definition))),
        actionButton("Alias", c.token, (b) => changeForm(b, `Add an alias to ${c.token}`,
          [{ name: "alias", label: `Another name for ${c.token}`, required: true }], "Add the alias",
          (v) => change(`/concepts/${encodeURIComponent(c.token)}/aliases`, v,
            (done) => (done.added ? `${done.token} is also called ${done.alias}.` : `${done.token} already had the alias ${done.alias}; nothing changed.`)))),
        actionButton("Forget", c.token, (b) => forgetFlow(b, "concept", c.token, `concept ${c.token}`)))]], concepts, ""));
};

function conceptGraph(relations, onSelect) {
  // As wide as the view draws it: one unit is one pixel, so a label is as big on a phone.
  const w = Math.round(Math.max(280, $("view").clientWidth || 800)), h = w < 600 ? 400 : 420;
  const nodes = new Map();
  const node = (name) => {
    if (!nodes.has(name)) {
      const angle = nodes.size * 2.399963;  // golden angle: a spread start, the same every time
      const r = 20 + 12 * Math.sqrt(nodes.size);
      nodes.set(name, { name, x: w / 2 + r * Math.cos(angle), y: h / 2 + r * Math.sin(angle), vx: 0, vy: 0 });
    }
    return nodes.get(name);
  };
  const edges = [];
  for (const r of relations) {
    if (nodes.size >= GRAPH_NODES && !(nodes.has(r.source) && nodes.has(r.target))) continue;
    edges.push({ a: node(r.source), b: node(r.target), label: r.relation });
  }
  const all = [...nodes.values()];
  for (let step = 0; step < 300; step++) {  // a plain force layout: repulsion, springs, gravity
    const cool = 1 - step / 300;
    for (const a of all) for (const b of all) {
      if (a === b) continue;
      const dx = a.x - b.x, dy = a.y - b.y, d2 = Math.max(dx * dx + dy * dy, 1);
      a.vx += (dx / d2) * 900; a.vy += (dy / d2) * 900;
    }
    for (const e of edges) {
      const dx = e.b.x - e.a.x, dy = e.b.y - e.a.y, d = Math.max(Math.hypot(dx, dy), 1), f = (d - 110) * 0.02;
      e.a.vx += (dx / d) * f; e.a.vy += (dy / d) * f; e.b.vx -= (dx / d) * f; e.b.vy -= (dy / d) * f;
    }
    for (const n of all) {
      n.vx += (w / 2 - n.x) * 0.01; n.vy += (h / 2 - n.y) * 0.01;
      const right = Math.max(w / 2, w - 20 - 7.5 * n.name.length);  // its label stays inside
      n.x = Math.min(right, Math.max(30, n.x + n.vx * cool)); n.y = Math.min(h - 20, Math.max(20, n.y + n.vy * cool));
      n.vx *= 0.5; n.vy *= 0.5;
    }
  }
  const graph = svg("svg", { class: "graph", viewBox: `0 0 ${w} ${h}`, role: "group", "aria-label": `Concept graph: ${all.length} concepts, ${edges.length} relations` });
  graph.append(svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 19, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow" }))));
  const lines = edges.map((e) => {
    const line = svg("line", { "marker-end": "url(#arrow)" }); const text = svg("text", { class: "edge", "text-anchor": "middle", text: e.label });
    graph.append(line, text); return { e, line, text };
  });
  const groups = all.map((n) => {
    const g = svg("g", { tabindex: 0, role: "button", "aria-label": `Concept ${n.name}` },
      svg("circle", { r: 9 }), svg("text", { x: 12, y: 4, text: n.name }));
    graph.append(g); return { n, g };
  });
  const draw = () => {
    for (const { e, line, text } of lines) {
      line.setAttribute("x1", e.a.x); line.setAttribute("y1", e.a.y); line.setAttribute("x2", e.b.x); line.setAttribute("y2", e.b.y);
      text.setAttribute("x", (e.a.x + e.b.x) / 2); text.setAttribute("y", (e.a.y + e.b.y) / 2 - 3);
    }
    for (const { n, g } of groups) g.setAttribute("transform", `translate(${n.x.toFixed(1)},${n.y.toFixed(1)})`);
  };
  const select = (n, g) => { for (const o of groups) o.g.classList.toggle("selected", o.g === g); onSelect(n.name); };
  for (const { n, g } of groups) {
    g.addEventListener("keydown", (event) => {
      const moves = { ArrowLeft: [-10, 0], ArrowRight: [10, 0], ArrowUp: [0, -10], ArrowDown: [0, 10] };
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(n, g); }
      else if (moves[event.key]) { event.preventDefault(); n.x += moves[event.key][0]; n.y += moves[event.key][1]; draw(); }
    });
    g.addEventListener("pointerdown", (event) => {
      event.preventDefault(); g.setPointerCapture(event.pointerId); select(n, g);
      const matrix = graph.getScreenCTM().inverse();
      const move = (ev) => { const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(matrix); n.x = p.x; n.y = p.y; draw(); };
      const up = () => { g.removeEventListener("pointermove", move); g.removeEventListener("pointerup", up); };
      g.addEventListener("pointermove", move); g.addEventListener("pointerup", up);
    });
  }
  draw();
  return graph;
}

// ---- identity -----------------------------------------------------------------------------
VIEWS.identity = async (section) => {
  const who = await api(mindPath("/identity"));
  const history = who.history || [];
  const cols = [["position", (r) => r.position, "num"], ["time", (r) => when(r.time)], ["change", (r) => r.change]];
  put(section, title("Identity"),
    el("dl", {}, el("dt", { text: "Name" }), el("dd", { text: who.name }),
      el("dt", { text: "Model" }), el("dd", { text: who.model }),
      el("dt", { text: "Ledger" }), el("dd", { text: who.ledger_id }),
      who.description ? [el("dt", { text: "Description" }), el("dd", { text: who.description })] : null,
      (who.pending_proposals || []).length ? [el("dt", { text: "Proposed names" }), el("dd", { text: who.pending_proposals.join(", ") })] : null),
    el("h3", { text: "Names" }),
    table([...cols, ["name", (r) => r.name], ["via", (r) => r.via], ["reason", (r) => r.reason], ["turn", (r) => r.turn ?? "", "num"]],
      history.filter((r) => r.change !== "model_switched" && r.name), "No name changes."),
    el("h3", { text: "Models" }),
    table([...cols, ["model", (r) => r.model]], history.filter((r) => r.model), "No model changes."));
};

// ---- knowledge (only when the knowledge tables exist) -------------------------------------
// The owner's view over /v1/minds/NAME/knowledge: each item's state, confidence and freshness,
// its history from the ledger, and the owner's decisions (the token is the owner).
const percent = (ppm) => (ppm === null || ppm === undefined ? "" : `${(ppm / 10000).toFixed(1)} %`);
const itemPath = (id, rest = "") => mindPath(`/knowledge/${encodeURIComponent(id)}${rest}`);

VIEWS.knowledge = async (section) => {
  const status = el("p", { id: "k-status", role: "status", "aria-live": "polite" });
  const list = el("div", { id: "k-list" });
  const detail = el("div", { id: "k-detail", "aria-live": "polite" });

  const act = async (id, action, body, done) => {
    try {
      const change = await api(itemPath(id, `/${action}`), { method: "POST", body: JSON.stringify(body || {}) });
      status.textContent = `${change.id}: ${action} done (revision ${change.revision}, ${change.state}, ${percent(change.confidence_ppm)}).`;
      await draw();
      if (done) done();
    } catch (e) { status.textContent = `${action} failed: ${e.message}`; }
  };

  const editForm = (k) => {
    const field = `k-edit-${k.item_id}`;
    const form = el("form", { class: "k-edit", "aria-label": `Edit the answer of ${k.item_id}` },
      el("label", { for: field }, "New answer", el("textarea", { id: field, name: "answer", required: true, rows: 3, text: k.answer || "" })),
      el("button", { type: "submit", text: "Save" }),
      el("button", { type: "button", text: "Cancel", onclick: () => { form.remove(); } }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      act(k.item_id, "edit", { answer: $(field).value });
    });
    return form;
  };

  const history = async (k) => {
    try {
      const shown = await api(`${itemPath(k.item_id)}?history=1`);
      detail.replaceChildren(el("h3", { id: "k-history-title", text: `History of ${k.item_id}` }),
        table([["version", (h) => h.version, "num"], ["change", (h) => h.type], ["time", (h) => when(h.timestamp)],
          ["by", (h) => h.role || h.captured_by || ""], ["state", (h) => h.state || h.judgement || ""],
          ["confidence", (h) => percent(h.confidence_ppm), "num"], ["answer or note", (h) => h.answer || h.note || h.reason || ""]],
        shown.history || [], "No changes recorded."));
      $("k-history-title").tabIndex = -1; $("k-history-title").focus();
    } catch (e) { status.textContent = `History failed: ${e.message}`; }
  };

  const actions = (k) => {
    const cell = el("div", { class: "k-actions", role: "group", "aria-label": `Actions on ${k.item_id}` });
    const button = (label, onclick) => el("button", { type: "button", "data-action": label.toLowerCase(), "aria-label": `${label} ${k.item_id}`, text: label, onclick });
    put(cell,
      button("History", () => history(k)),
      button("Verify", () => act(k.item_id, "verify")),
      button("Dispute", () => act(k.item_id, "dispute")),
      button("Retract", () => act(k.item_id, "retract")),
      button("Edit", () => { if (!cell.querySelector("form")) { cell.append(editForm(k)); $(`k-edit-${k.item_id}`).focus(); } }),
      button("Delete", () => {
        if (window.confirm(`Delete ${k.item_id}? Its content leaves the read models and recall; its history stays in the ledger.`)) act(k.item_id, "delete");
      }),
      actionButton("Forget", k.item_id, (b) => forgetFlow(b, "knowledge", k.item_id, `knowledge item ${k.item_id}`)));
    return cell;
  };

  const draw = async () => {
    const items = await api(mindPath("/knowledge"));
    list.replaceChildren(table([["item", (k) => k.item_id], ["question", (k) => k.question], ["answer", (k) => k.answer],
      ["state", (k) => k.state], ["confidence", (k) => percent(k.confidence_ppm), "num"], ["freshness", (k) => k.freshness],
      ["revision", (k) => k.revision, "num"], ["by", (k) => k.captured_by], ["updated", (k) => when(k.updated_at)],
      ["owner actions", actions]], items, "Nothing known yet."));
  };

  put(section, title("Knowledge"),
    el("p", { class: "muted", text: "What the mind knows, with its validation state, confidence and freshness. Your decisions are recorded in the ledger; a deleted item leaves recall but keeps its history." }),
    status, list, detail);
  await draw();
};

// ---- recall -------------------------------------------------------------------------------
VIEWS.recall = async (section) => {
  const out = el("div", { id: "recall-result", "aria-live": "polite" });
  const form = el("form", { class: "filters", "aria-label": "Recall" },
    el("label", { for: "r-query" }, "What to remember", el("input", { id: "r-query", name: "q", type: "search", required: true })),
    el("label", { for: "r-budget" }, "Budget (tokens)", el("input", { id: "r-budget", name: "budget", type: "number", min: state.budget.recall_floor, value: state.budget.default })),
    el("button", { type: "submit", text: "Recall" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const params = new URLSearchParams({ q: $("r-query").value, budget: $("r-budget").value || String(state.budget.default) });
    try {
      const r = await api(mindPath(`/recall?${params}`));
      out.replaceChildren(el("p", { text: `${r.items.length} items, ${r.tokens} of ${params.get("budget")} tokens; ${r.dropped} more over budget.` }),
        table([["rank", (i) => r.items.indexOf(i) + 1, "num"], ["kind", (i) => i.kind], ["channel", (i) => i.channel],
          ["why", (i) => i.reason], ["score", (i) => num(i.score, 4), "num"], ["tokens", (i) => i.tokens, "num"],
          ["day", (i) => i.day || ""], ["text", (i) => i.text]], r.items, "Nothing to recall."));
    } catch (e) { out.replaceChildren(el("p", { class: "error", text: e.message })); }
  });
  put(section, title("Recall"), el("p", { class: "muted", text: "What the mind would remember for a message, at which budget, and why (no model call)." }), form, out);
};

document.addEventListener("DOMContentLoaded", start);
