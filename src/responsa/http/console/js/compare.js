// Compare: re-run a stored response with its full context on another model or with other parameters,
// and show both outputs, usages and timelines side by side.

import { all, get } from "./api.js";
import { append, clear, errorBox, field, h, link, raw } from "./dom.js";
import { itemView, itemsView } from "./items.js";
import { EFFORTS, modelOptions } from "./playground.js";
import { speed, stream } from "./run.js";
import { timelineView } from "./timeline.js";

const CARRIED = ["instructions", "tools", "tool_choice", "text", "reasoning", "temperature", "top_p",
  "max_output_tokens", "parallel_tool_calls", "truncation", "max_tool_calls"];

/** An item as input again: without its stored id and status (the re-run stores its own). */
function asInput(item) {
  const { id: _id, status: _status, ...rest } = item;
  return item.type === "item_reference" ? item : rest;
}

/**
 * The context the response was created with: what it continued (its previous response, which the
 * re-run continues too), or the conversation's items before it, then its own input items.
 */
export async function context(response) {
  const input = await all(`/v1/responses/${encodeURIComponent(response.id)}/input_items`);
  let before = [];
  if (response.conversation && response.conversation.id) {
    const items = await all(`/v1/conversations/${encodeURIComponent(response.conversation.id)}/items`);
    const start = input.length ? items.findIndex((item) => item.id === input[0].id) : -1;
    before = start >= 0 ? items.slice(0, start) : [];
  }
  return [...before, ...input].map(asInput);
}

function rerunBody(response, input, form) {
  const body = { model: form.model.value, input, store: true, metadata: { compare_of: response.id } };
  for (const name of CARRIED) if (response[name] !== null && response[name] !== undefined) body[name] = response[name];
  if (response.previous_response_id) body.previous_response_id = response.previous_response_id;
  if (form.temperature.value !== "") body.temperature = Number(form.temperature.value);
  if (form.max_output_tokens.value !== "") body.max_output_tokens = Number(form.max_output_tokens.value);
  if (form.effort.value) body.reasoning = { ...(response.reasoning || {}), effort: form.effort.value };
  if (body.reasoning && !body.reasoning.effort) delete body.reasoning;
  if (body.tools && body.tools.length === 0) delete body.tools;
  return body;
}

function usageLine(usage) {
  return usage ? `${usage.input_tokens} in · ${usage.output_tokens} out · ${usage.total_tokens} total tokens` : "no usage";
}

function column(title, response, timeline) {
  return h("div", { class: "column", "data-response": response.id },
    h("h2", {}, title, " ", link(`#/responses/${response.id}`, response.id)),
    h("p", {}, h("strong", {}, response.model), " · ", h("span", { class: `status ${response.status}` }, response.status)),
    h("p", { class: "usage" }, usageLine(response.usage)),
    itemsView(response.output, "No output."),
    timeline ? timelineView(timeline) : null,
    raw(response));
}

export function comparePage(root, query, id) {
  const body = h("div", { class: "loading" }, "Loading…");
  append(root, [h("h1", {}, "Compare ", link(`#/responses/${id}`, id)), body]);
  show(body, id, query.get("with")).catch((error) => body.replaceChildren(errorBox(error)));
}

async function show(body, id, other) {
  const response = await get(`/v1/responses/${encodeURIComponent(id)}`);
  const timeline = await get(`/v1/responses/${encodeURIComponent(id)}/timeline`);
  const form = h("form", { class: "compare-form row" },
    field("Model", h("select", { name: "model" })),
    field("Temperature", h("input", { name: "temperature", type: "number", step: "0.1", min: "0", max: "2", value: response.temperature ?? "" })),
    field("Max output tokens", h("input", { name: "max_output_tokens", type: "number", min: "1", value: response.max_output_tokens ?? "" })),
    field("Reasoning effort", h("select", { name: "effort" },
      EFFORTS.map((effort) => h("option", { value: effort, selected: effort === ((response.reasoning || {}).effort || "") }, effort || "as stored")))),
    h("button", { type: "submit" }, "Re-run"));
  const right = h("div", { class: "column pending" }, h("p", { class: "muted" }, "Choose a model or parameters and re-run."));
  clear(body).className = "";
  append(body, [form, h("div", { class: "side-by-side" }, column("Original", response, timeline), right)]);
  await modelOptions(form.model, response.model);
  if (other) await showOther(right, other);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    form.querySelector("button").disabled = true;
    try {
      const requestBody = rerunBody(response, await context(response), form);
      const live = h("div", { class: "items" });
      const figures = h("p", { class: "usage" });
      right.className = "column running";
      right.replaceChildren(h("h2", {}, "Re-run"), live, figures);
      const state = await stream(requestBody, (now) => {
        live.replaceChildren(...now.output.filter(Boolean).map((item) => itemView(item)));
        const { ttft } = speed(now);
        figures.textContent = ttft === null ? "waiting for the first token…" : `first token ${Math.round(ttft)} ms`;
      });
      if (state.error) throw state.error;
      await showOther(right, state.response.id);
      history.replaceState(null, "", `#/compare/${id}?with=${state.response.id}`);
    } catch (error) {
      right.replaceChildren(errorBox(error));
    } finally {
      form.querySelector("button").disabled = false;
    }
  });
}

async function showOther(right, otherId) {
  const [other, timeline] = await Promise.all([
    get(`/v1/responses/${encodeURIComponent(otherId)}`),
    get(`/v1/responses/${encodeURIComponent(otherId)}/timeline`),
  ]);
  right.replaceWith(column("Re-run", other, timeline));
}
