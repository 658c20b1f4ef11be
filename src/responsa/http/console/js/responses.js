// Stored responses: the filtered, paged list, and one response's page (parameters, input and output
// items, usage, its chain, its timeline).

import { all, get } from "./api.js";
import { append, clear, errorBox, field, h, json, link, raw, when } from "./dom.js";
import { itemsView, outputText } from "./items.js";
import { cancel } from "./run.js";
import { timelineView } from "./timeline.js";

const FILTERS = ["model", "status", "previous_response_id", "conversation", "created_after", "created_before"];
const STATUSES = ["", "queued", "in_progress", "completed", "incomplete", "failed", "cancelled"];

function unix(local) {
  return local ? String(Math.floor(new Date(local).getTime() / 1000)) : "";
}

function local(seconds) {
  if (!seconds) return "";
  const date = new Date(Number(seconds) * 1000);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

/** The list's query from the page's hash query: the filters, metadata[KEY], and a cursor. */
function listQuery(query) {
  const out = new URLSearchParams({ limit: "20" });
  for (const [name, value] of query) if (value && (FILTERS.includes(name) || name.startsWith("metadata[") || name === "after" || name === "before")) out.set(name, value);
  return out;
}

function filterForm(query) {
  const metadata = [...query].find(([name]) => name.startsWith("metadata["));
  const form = h("form", { class: "filters" },
    field("Model", h("input", { name: "model", value: query.get("model") || "" })),
    field("Status", h("select", { name: "status" }, STATUSES.map((status) => h("option", { value: status, selected: status === (query.get("status") || "") }, status || "any")))),
    field("Metadata", h("input", { name: "metadata", placeholder: "key=value", value: metadata ? `${metadata[0].slice(9, -1)}=${metadata[1]}` : "" })),
    field("Created after", h("input", { name: "created_after", type: "datetime-local", value: local(query.get("created_after")) })),
    field("Created before", h("input", { name: "created_before", type: "datetime-local", value: local(query.get("created_before")) })),
    field("Continues", h("input", { name: "previous_response_id", placeholder: "resp_...", value: query.get("previous_response_id") || "" })),
    field("Conversation", h("input", { name: "conversation", placeholder: "conv_...", value: query.get("conversation") || "" })),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of ["model", "status", "previous_response_id", "conversation"]) if (form[name].value.trim()) next.set(name, form[name].value.trim());
    for (const name of ["created_after", "created_before"]) if (form[name].value) next.set(name, unix(form[name].value));
    const pair = form.metadata.value.trim();
    if (pair.includes("=")) next.set(`metadata[${pair.slice(0, pair.indexOf("="))}]`, pair.slice(pair.indexOf("=") + 1));
    location.hash = `#/responses?${next}`;
  });
  return form;
}

function usageText(usage) {
  return usage ? `${usage.input_tokens} / ${usage.output_tokens}` : "";
}

export function responsesTable(responses) {
  return h("table", { class: "list responses" },
    h("thead", {}, h("tr", {}, ["Response", "Created", "Model", "Status", "Tokens in / out", "Output"].map((name) => h("th", {}, name)))),
    h("tbody", {}, responses.map((response) => h("tr", { "data-id": response.id },
      h("td", {}, link(`#/responses/${response.id}`, response.id)),
      h("td", {}, when(response.created_at)),
      h("td", {}, response.model),
      h("td", {}, h("span", { class: `status ${response.status}` }, response.status)),
      h("td", {}, usageText(response.usage)),
      h("td", { class: "preview" }, outputText(response).slice(0, 120))))));
}

export function responsesPage(root, query) {
  const list = h("div", { class: "loading" }, "Loading…");
  append(root, [h("h1", {}, "Responses"), filterForm(query), list]);
  const request = listQuery(query);
  get(`/v1/responses?${request}`).then((page) => {
    const pager = h("div", { class: "pager" });
    const base = new URLSearchParams(query);
    base.delete("after");
    base.delete("before");
    if (query.get("after") || query.get("before")) {
      const newer = new URLSearchParams(base);
      if (page.first_id) newer.set("before", page.first_id);
      pager.append(link(`#/responses?${newer}`, "← Newer"));
    }
    if (page.has_more || query.get("before")) {
      const older = new URLSearchParams(base);
      if (page.last_id) older.set("after", page.last_id);
      pager.append(link(`#/responses?${older}`, "Older →"));
    }
    list.className = "";
    list.replaceChildren(page.data.length ? responsesTable(page.data) : h("p", { class: "muted empty" }, "No responses match."), pager, raw(page));
  }).catch((error) => list.replaceChildren(errorBox(error)));
}

const PARAMETERS = ["model", "status", "created_at", "instructions", "temperature", "top_p", "max_output_tokens",
  "reasoning", "text", "tool_choice", "tools", "truncation", "parallel_tool_calls", "background", "store", "metadata",
  "previous_response_id", "conversation", "error", "incomplete_details", "usage"];

function value(name, response) {
  const v = response[name];
  if (name === "previous_response_id" && v) return link(`#/responses/${v}`, v);
  if (name === "conversation" && v) return link(`#/conversations/${v.id}`, v.id);
  if (name === "created_at") return when(v);
  if (v !== null && typeof v === "object") return json(v);
  return String(v);
}

function parameters(response) {
  const rows = PARAMETERS.filter((name) => response[name] !== undefined && response[name] !== null
    && !(Array.isArray(response[name]) && response[name].length === 0)
    && !(typeof response[name] === "object" && !Array.isArray(response[name]) && Object.keys(response[name]).length === 0));
  return h("table", { class: "parameters" }, h("tbody", {}, rows.map((name) => h("tr", { "data-name": name }, h("th", {}, name), h("td", {}, value(name, response))))));
}

function section(title, ...content) {
  return h("section", {}, h("h2", {}, title), ...content);
}

export function responsePage(root, _query, id) {
  const body = h("div", { class: "loading" }, "Loading…");
  append(root, [h("h1", {}, "Response ", h("code", {}, id)), body]);
  load(body, id).catch((error) => body.replaceChildren(errorBox(error)));
}

async function load(body, id) {
  const response = await get(`/v1/responses/${encodeURIComponent(id)}`);
  const [input, next, timeline] = await Promise.all([
    all(`/v1/responses/${encodeURIComponent(id)}/input_items`),
    get(`/v1/responses?previous_response_id=${encodeURIComponent(id)}&order=asc&limit=100`),
    get(`/v1/responses/${encodeURIComponent(id)}/timeline`),
  ]);
  const actions = h("div", { class: "actions" }, link(`#/compare/${id}`, "Compare / re-run"));
  if (response.status === "queued" || response.status === "in_progress") {
    const stop = h("button", { type: "button", name: "cancel" }, "Cancel");
    stop.addEventListener("click", async () => {
      stop.disabled = true;
      try { await cancel(id); } catch (error) { actions.append(errorBox(error)); }
      await load(body, id);
    });
    actions.append(stop);
  }
  const chain = h("div", { class: "chain" },
    response.previous_response_id ? h("span", {}, "← continues ", link(`#/responses/${response.previous_response_id}`, response.previous_response_id)) : h("span", { class: "muted" }, "Starts its chain."),
    next.data.length ? h("span", {}, " · continued by ", next.data.map((later, index) => [index ? ", " : "", link(`#/responses/${later.id}`, later.id)])) : null);
  clear(body).className = "";
  append(body, [
    actions, chain,
    section("Parameters", parameters(response)),
    section("Timeline", timelineView(timeline), raw(timeline, "Raw timeline")),
    section("Input items", itemsView(input)),
    section("Output items", itemsView(response.output, "No output.")),
    raw(response),
  ]);
}
