// ragwright web page: search, streamed answers with clickable [Source N] citations, uploads.
// Plain browser JavaScript, no build step, no external assets.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY_STORE = "ragwright.apiKey";
const MODES = {
  hybrid: { use_hybrid_search: true },
  dense: { use_hybrid_search: false },
  bm25: { use_dense_search: false, use_keyword_search: true },
};
let answerSources = [];
let answerDocuments = {};

function headers(extra) {
  // X-Requested-With: the server refuses key-less POSTs without it or JSON (cross-site request forgery).
  const h = Object.assign({ "X-Requested-With": "ragwright" }, extra || {});
  const key = $("api-key").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 8000);
}

async function errorText(response) {
  try {
    const body = await response.json();
    return body.error || response.statusText;
  } catch (e) {
    return response.status + " " + response.statusText;
  }
}

async function api(path, options) {
  const response = await fetch(path, Object.assign({}, options, { headers: headers((options || {}).headers) }));
  if (!response.ok) throw new Error(await errorText(response));
  return response.json();
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function where(result) {
  const parts = [];
  if (result.section_path && result.section_path.length) parts.push(result.section_path.join(" › "));
  if (result.page !== null && result.page !== undefined) parts.push("page " + result.page);
  return parts.join(" · ");
}

function titleOf(result, documents) {
  const doc = (documents || {})[result.document_id] || {};
  return doc.title || result.document_id.split("/").pop();
}

function armsTable(result) {
  const rows = Object.entries(result.arms || {}).map(([arm, hit]) =>
    el("tr", {}, el("th", {}, arm), el("td", {}, "#" + hit.rank), el("td", {}, hit.score.toFixed(4))));
  return el("details", { class: "scores" },
    el("summary", {}, "scores (final " + result.score.toFixed(4) + ")"),
    el("table", { class: "arms" }, el("tr", {}, el("th", {}, "arm"), el("th", {}, "rank"), el("th", {}, "score")), ...rows));
}

// -- status and documents ------------------------------------------------------------------------
async function refreshStatus() {
  try {
    const s = await api("/status");
    $("status-line").textContent = s.documents + " documents, " + s.chunks + " chunks · tenant " + s.tenant;
  } catch (e) {
    $("status-line").textContent = e.message;
  }
}

async function refreshDocuments() {
  const list = $("documents");
  try {
    const body = await api("/documents?status=indexed");
    list.replaceChildren(...body.documents.map((d) =>
      el("li", {}, (d.title || d.document_id.split("/").pop()) + " (" + d.chunk_count + " chunks)",
        el("button", { type: "button", title: d.document_id, onclick: () => removeDocument(d.document_id) }, "remove"))));
  } catch (e) {
    list.replaceChildren(el("li", { class: "muted" }, e.message));
  }
}

async function removeDocument(id) {
  try {
    await api("/documents/" + id.split("/").map(encodeURIComponent).join("/"), { method: "DELETE" });
    refreshDocuments();
    refreshStatus();
  } catch (e) {
    showError(e.message);
  }
}

// -- search --------------------------------------------------------------------------------------
async function search(event) {
  event.preventDefault();
  const options = Object.assign({ top_k: parseInt($("search-topk").value, 10) || 5 }, MODES[$("search-mode").value]);
  $("search-button").disabled = true;
  try {
    const body = await api("/search", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ query: $("search-input").value, options }),
    });
    const items = body.results.map((r) => el("li", {},
      el("div", { class: "title" }, titleOf(r, body.documents)),
      el("div", { class: "where" }, where(r)),
      el("div", { class: "text" }, r.text),
      armsTable(r)));
    $("results").replaceChildren(...(items.length ? items : [el("li", { class: "muted" }, "no results")]));
  } catch (e) {
    showError(e.message);
  } finally {
    $("search-button").disabled = false;
  }
}

// -- ask (server-sent events over fetch) -----------------------------------------------------------
function renderAnswer(text) {
  const box = $("answer");
  box.replaceChildren();
  let last = 0;
  for (const match of text.matchAll(/\[Source (\d+)\]/g)) {
    box.append(text.slice(last, match.index));
    const n = parseInt(match[1], 10);
    box.append(el("a", { class: "cite", href: "#", "data-source": String(n), onclick: (e) => { e.preventDefault(); showSource(n, e.target); } }, match[0]));
    last = match.index + match[0].length;
  }
  box.append(text.slice(last));
}

function showSource(n, link) {
  const view = $("source-view");
  const result = answerSources.find((s) => s.source === n);
  document.querySelectorAll("a.cite.active").forEach((a) => a.classList.remove("active"));
  if (!result) {
    view.hidden = false;
    view.replaceChildren(el("div", { class: "muted" }, "Source " + n + " is not available (yet)."));
    return;
  }
  if (link) link.classList.add("active");
  view.replaceChildren(
    el("div", { class: "title" }, "[Source " + n + "] " + titleOf(result, answerDocuments)),
    el("div", { class: "where" }, where(result)),
    el("div", { class: "text source-text" }, result.text),
    armsTable(result));
  view.hidden = false;
}

async function ask(event) {
  event.preventDefault();
  const box = $("answer");
  let text = "";
  let tokens = 0;
  answerSources = [];
  answerDocuments = {};
  box.className = "answer";
  box.dataset.tokens = "0";
  box.dataset.done = "false";
  box.replaceChildren();
  $("answer-meta").textContent = "";
  $("source-view").hidden = true;
  $("ask-button").disabled = true;
  try {
    const response = await fetch("/ask", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify({ question: $("ask-input").value }),
    });
    if (!response.ok) throw new Error(await errorText(response));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const handle = (name, data) => {
      if (name === "token") {
        text += data;
        tokens += 1;
        box.dataset.tokens = String(tokens);
        renderAnswer(text);
      } else if (name === "sources") {
        answerSources = data.sources;
        answerDocuments = data.documents || {};
      } else if (name === "citations") {
        if (data.declined) box.classList.add("declined");
        $("answer-meta").textContent = data.citations.length + " citation(s) · " + answerSources.length + " source(s)";
      } else if (name === "done") {
        if (!text && data.answer) renderAnswer(data.answer);
        box.dataset.done = "true";
        if (data.retrieval_path) $("answer-meta").textContent += " · " + data.retrieval_path;
      } else if (name === "error") {
        throw new Error(data.error);
      }
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) handle(name, JSON.parse(data.join("\n")));
      }
    }
  } catch (e) {
    showError(e.message);
  } finally {
    $("ask-button").disabled = false;
  }
}

// -- ingest (XHR: upload progress) -------------------------------------------------------------------
function ingest(event) {
  event.preventDefault();
  const files = $("ingest-files").files;
  if (!files.length) return;
  const form = new FormData();
  for (const f of files) form.append("files", f, f.name);
  const bar = $("ingest-progress");
  const result = $("ingest-result");
  bar.hidden = false;
  bar.value = 0;
  result.textContent = "uploading…";
  $("ingest-button").disabled = true;
  const xhr = new XMLHttpRequest();
  xhr.open("POST", "/ingest");
  for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
  xhr.upload.onprogress = (e) => {
    if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total);
  };
  xhr.upload.onload = () => {
    bar.removeAttribute("value"); // indeterminate while the server parses and embeds
    result.textContent = "ingesting…";
  };
  xhr.onload = () => {
    $("ingest-button").disabled = false;
    bar.hidden = true;
    let body = {};
    try { body = JSON.parse(xhr.responseText); } catch (e) { body = { error: xhr.statusText }; }
    if (xhr.status !== 200) {
      result.textContent = "failed: " + (body.error || xhr.status);
      showError(body.error || "upload failed");
      return;
    }
    result.textContent = "added " + body.added + ", updated " + body.updated + ", unchanged " + body.unchanged +
      ", failed " + body.failed.length + "; " + body.chunks + " chunks in " + body.seconds + " s" +
      body.failed.map((f) => " — " + f.document.split("/").pop() + ": " + f.reason).join("");
    result.dataset.done = "true";
    refreshStatus();
    refreshDocuments();
  };
  xhr.onerror = () => {
    $("ingest-button").disabled = false;
    bar.hidden = true;
    result.textContent = "failed: the connection was lost";
  };
  xhr.send(form);
}

// -- start -----------------------------------------------------------------------------------------
window.addEventListener("DOMContentLoaded", () => {
  const keyInput = $("api-key");
  keyInput.value = localStorage.getItem(KEY_STORE) || "";
  keyInput.addEventListener("change", () => {
    localStorage.setItem(KEY_STORE, keyInput.value.trim());
    refreshStatus();
    refreshDocuments();
  });
  $("search-form").addEventListener("submit", search);
  $("ask-form").addEventListener("submit", ask);
  $("ingest-form").addEventListener("submit", ingest);
  $("documents-box").addEventListener("toggle", refreshDocuments);
  refreshStatus();
});
