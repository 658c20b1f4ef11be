// The server page: models, reusable prompts, upstream workers' health and latency, active streams and request rates
// (GET /v1/server, read every two seconds; rates are the difference between two readings).

import { get } from "./api.js";
import { append, errorBox, h, raw, when } from "./dom.js";

const PERIOD_MS = 2000;

function sum(counts) {
  return Object.values(counts || {}).reduce((total, count) => total + count, 0);
}

function rates(now, before) {
  if (!before) return null;
  const seconds = (now.readAt - before.readAt) / 1000;
  return {
    requests: (sum(now.requests) - sum(before.requests)) / seconds,
    tokens: (now.tokens.output - before.tokens.output) / seconds,
  };
}

function view(status, rate) {
  return [
    h("p", {}, `responsa ${status.version} · up since ${when(status.started_at)}`),
    h("div", { class: "cards" },
      h("div", { class: "card" }, h("small", {}, "Active streams"), h("strong", { "data-figure": "active_streams" }, String(status.active_streams))),
      h("div", { class: "card" }, h("small", {}, "Requests/s"), h("strong", { "data-figure": "request_rate" }, rate ? rate.requests.toFixed(1) : "…")),
      h("div", { class: "card" }, h("small", {}, "Output tokens/s"), h("strong", {}, rate ? rate.tokens.toFixed(1) : "…")),
      h("div", { class: "card" }, h("small", {}, "Requests served"), h("strong", { "data-figure": "requests" }, String(sum(status.requests)))),
      h("div", { class: "card" }, h("small", {}, "Tokens in / out"), h("strong", {}, `${status.tokens.input} / ${status.tokens.output}`))),
    h("h2", {}, "Requests by status"),
    h("table", { class: "list" }, h("tbody", {}, Object.entries(status.requests).map(([code, count]) => h("tr", {}, h("th", {}, code), h("td", {}, String(count)))))),
    h("h2", {}, "Models"),
    h("ul", { class: "models" }, status.models.map((model) => h("li", {}, model))),
    h("h2", {}, "Prompts"),
    status.prompts.length === 0 ? h("p", { class: "muted" }, "No reusable prompts (--prompts-dir).") :
      h("ul", { class: "prompts" }, status.prompts.map((prompt) => h("li", {}, `${prompt.id} (versions ${prompt.versions.join(", ")})`))),
    h("h2", {}, "Upstream workers"),
    status.workers.length === 0 ? h("p", { class: "muted" }, "No upstream workers: models are served in this process.") :
      h("table", { class: "list workers" },
        h("thead", {}, h("tr", {}, ["Model", "URL", "Health", "In flight", "Health-check latency"].map((name) => h("th", {}, name)))),
        h("tbody", {}, status.workers.map((worker) => h("tr", {},
          h("td", {}, worker.model), h("td", {}, worker.url),
          h("td", {}, h("span", { class: `status ${worker.healthy ? "completed" : "failed"}` }, worker.healthy ? "healthy" : "down")),
          h("td", {}, String(worker.in_flight)),
          h("td", {}, worker.latency_ms === null ? "not probed yet" : `${worker.latency_ms} ms`))))),
    raw(status),
  ];
}

export function serverPage(root) {
  const body = h("div", { class: "loading" }, "Loading…");
  append(root, [h("h1", {}, "Server"), body]);
  let previous = null;
  let stopped = false;
  let timer = null;
  const read = async () => {
    try {
      const status = await get("/v1/server");
      status.readAt = performance.now();
      if (stopped) return;
      body.className = "";
      body.replaceChildren(...view(status, rates(status, previous)));
      previous = status;
    } catch (error) {
      body.replaceChildren(errorBox(error));
    }
    if (!stopped) timer = setTimeout(read, PERIOD_MS);
  };
  read();
  return () => { stopped = true; clearTimeout(timer); };
}
