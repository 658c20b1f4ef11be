// Batches and webhooks: the tenant's batches with their progress (GET /v1/batches, read every two
// seconds while one is unfinished), and each webhook endpoint with its delivery log.

import { get } from "./api.js";
import { append, errorBox, h, raw, when } from "./dom.js";

const PERIOD_MS = 2000;
const FINAL = new Set(["completed", "failed", "expired", "cancelled"]);

function progress(batch) {
  const counts = batch.request_counts || { completed: 0, failed: 0, total: 0 };
  const done = counts.completed + counts.failed;
  return h("span", { class: "progress", "data-done": String(done), "data-total": String(counts.total) },
    h("progress", { max: String(counts.total || 1), value: String(done) }),
    ` ${done} / ${counts.total}`, counts.failed ? ` (${counts.failed} failed)` : "");
}

function batchesTable(batches) {
  return h("table", { class: "list batches" },
    h("thead", {}, h("tr", {}, ["Batch", "Created", "Endpoint", "Model", "Status", "Progress", "Output / errors"].map((name) => h("th", {}, name)))),
    h("tbody", {}, batches.map((batch) => h("tr", { "data-id": batch.id },
      h("td", {}, h("code", {}, batch.id), raw(batch, "JSON")),
      h("td", {}, when(batch.created_at)),
      h("td", {}, batch.endpoint),
      h("td", {}, batch.model || ""),
      h("td", {}, h("span", { class: `status ${batch.status}`, "data-status": batch.status }, batch.status)),
      h("td", {}, progress(batch)),
      h("td", {}, [batch.output_file_id, batch.error_file_id].filter(Boolean).map((id) => h("div", {}, h("code", {}, id))))))));
}

export function batchesPage(root) {
  const list = h("div", { class: "loading" }, "Loading…");
  append(root, [h("h1", {}, "Batches"), list]);
  let timer = null;
  let stopped = false;
  const read = async () => {
    try {
      const page = await get("/v1/batches?limit=100");
      if (stopped) return;
      list.className = "";
      list.replaceChildren(page.data.length ? batchesTable(page.data) : h("p", { class: "muted" }, "No batches."));
      if (page.data.some((batch) => !FINAL.has(batch.status))) timer = setTimeout(read, PERIOD_MS);
    } catch (error) {
      list.replaceChildren(errorBox(error));
    }
  };
  read();
  return () => { stopped = true; clearTimeout(timer); };
}

function deliveriesTable(deliveries) {
  return h("table", { class: "list deliveries" },
    h("thead", {}, h("tr", {}, ["Delivery", "Event", "Status", "Attempts", "Last answer", "Created"].map((name) => h("th", {}, name)))),
    h("tbody", {}, deliveries.map((delivery) => h("tr", { "data-id": delivery.id },
      h("td", {}, h("code", {}, delivery.id)),
      h("td", {}, delivery.event_type),
      h("td", {}, h("span", { class: `status ${delivery.status}`, "data-status": delivery.status }, delivery.status)),
      h("td", {}, String(delivery.attempts)),
      h("td", {}, delivery.last_status_code ? String(delivery.last_status_code) : (delivery.last_error || "")),
      h("td", {}, when(delivery.created_at))))));
}

export function webhooksPage(root) {
  const body = h("div", { class: "loading" }, "Loading…");
  append(root, [h("h1", {}, "Webhooks"), body]);
  (async () => {
    const endpoints = await get("/v1/webhook_endpoints?limit=100");
    const sections = await Promise.all(endpoints.data.map(async (endpoint) => {
      const log = await get(`/v1/webhook_endpoints/${encodeURIComponent(endpoint.id)}/deliveries?limit=100`);
      return h("section", { class: "endpoint", "data-id": endpoint.id },
        h("h2", {}, endpoint.name, " ", h("code", {}, endpoint.url)),
        h("p", { class: "muted" }, `${endpoint.event_types.join(", ")} · secret ${endpoint.signing_secret_hint}`),
        log.data.length ? deliveriesTable(log.data) : h("p", { class: "muted" }, "No deliveries yet."));
    }));
    body.className = "";
    body.replaceChildren(...(sections.length ? sections : [h("p", { class: "muted" }, "No webhook endpoints.")]));
  })().catch((error) => body.replaceChildren(errorBox(error)));
}
