// The usage page: requests, tokens in and out, errors and latency over time, by model, project or key
// (GET /v1/organization/usage/completions with the admin key), drawn here as SVG.

import { admin, adminKey } from "./api.js";
import { adminKeyForm } from "./projects.js";
import { append, errorBox, field, h } from "./dom.js";
import { lineChart } from "./charts.js";

const RANGES = {
  hour: { label: "Last hour, by minute", width: "1m", bucket: 60, buckets: 60 },
  day: { label: "Last day, by hour", width: "1h", bucket: 3600, buckets: 24 },
  month: { label: "Last 30 days, by day", width: "1d", bucket: 86400, buckets: 31 },
};
const GROUPS = { "": "everything", model: "model", project_id: "project", api_key_id: "key" };

async function read(range, group) {
  const chosen = RANGES[range];
  const query = new URLSearchParams({
    // the last bucket is the one now is in
    start_time: String(Math.floor(Date.now() / 1000) - (chosen.buckets - 1) * chosen.bucket),
    bucket_width: chosen.width, limit: String(chosen.buckets),
  });
  if (group) query.append("group_by[]", group);
  return admin("GET", `/usage/completions?${query}`);
}

/** One series per group (its name the group's value), each a value per bucket of `page` (`empty`
 * where the group used nothing then: 0 for counts, null for latency, which has no value). */
function seriesOf(page, group, figure, empty = 0) {
  const names = new Set(page.data.flatMap((bucket) => bucket.results.map((result) => (group ? result[group] || "none" : "all"))));
  return [...names].map((name) => ({
    name,
    values: page.data.map((bucket) => {
      const found = bucket.results.filter((result) => (group ? (result[group] || "none") === name : true));
      return found.length ? figure(found) : empty;
    }),
  }));
}

const sum = (name) => (results) => results.reduce((total, result) => total + (result[name] || 0), 0);
const worst = (name) => (results) => {
  const values = results.map((result) => result[name]).filter((value) => value !== null && value !== undefined);
  return values.length ? Math.max(...values) : null;
};

function totals(page, group) {
  const rows = new Map();
  for (const bucket of page.data) {
    for (const result of bucket.results) {
      const name = group ? result[group] || "none" : "all";
      const row = rows.get(name) || { requests: 0, input: 0, output: 0, errors: 0 };
      row.requests += result.num_model_requests; row.input += result.input_tokens;
      row.output += result.output_tokens; row.errors += result.errors || 0;
      rows.set(name, row);
    }
  }
  return h("table", { class: "list usage-totals" },
    h("thead", {}, h("tr", {}, [GROUPS[group], "Requests", "Tokens in", "Tokens out", "Errors"].map((name) => h("th", {}, name)))),
    h("tbody", {}, [...rows].map(([name, row]) => h("tr", {}, h("td", {}, name), h("td", {}, String(row.requests)),
      h("td", {}, String(row.input)), h("td", {}, String(row.output)), h("td", {}, String(row.errors))))));
}

function view(page, range, group) {
  const starts = page.data.map((bucket) => bucket.start_time);
  const label = range === "month" ? (start) => new Date(start * 1000).toLocaleDateString() : undefined;
  const latency = [
    ...seriesOf(page, group, worst("latency_p50_ms"), null).map((line) => ({ ...line, name: `${line.name} p50` })),
    ...seriesOf(page, group, worst("latency_p99_ms"), null).map((line) => ({ ...line, name: `${line.name} p99` })),
  ];
  return [
    h("div", { class: "charts" },
      lineChart("Requests", starts, seriesOf(page, group, sum("num_model_requests")), label),
      lineChart("Tokens in", starts, seriesOf(page, group, sum("input_tokens")), label),
      lineChart("Tokens out", starts, seriesOf(page, group, sum("output_tokens")), label),
      lineChart("Errors", starts, seriesOf(page, group, sum("errors")), label),
      lineChart("Latency (ms)", starts, latency, label)),
    h("h2", {}, "Totals"),
    totals(page, group),
  ];
}

export function usagePage(root) {
  const rangeSelect = h("select", { name: "range" }, Object.entries(RANGES).map(([value, range]) => h("option", { value }, range.label)));
  const groupSelect = h("select", { name: "group" }, Object.entries(GROUPS).map(([value, name]) => h("option", { value }, name)));
  const body = h("div", {});
  const show = async () => {
    if (!adminKey()) {
      body.replaceChildren(adminKeyForm(show));
      return;
    }
    body.replaceChildren(h("div", { class: "loading" }, "Loading…"));
    try {
      const page = await read(rangeSelect.value, groupSelect.value);
      body.replaceChildren(...view(page, rangeSelect.value, groupSelect.value));
    } catch (error) {
      body.replaceChildren(...[errorBox(error), error.status === 401 || error.status === 403 ? adminKeyForm(show) : null].filter(Boolean));
    }
  };
  rangeSelect.addEventListener("change", show);
  groupSelect.addEventListener("change", show);
  append(root, [h("h1", {}, "Usage"),
    h("div", { class: "row usage-controls" }, field("Range", rangeSelect), field("By", groupSelect)), body]);
  show();
}
