// The playground: the conversation first (the transcript, and beneath it what to send: text, files and
// images attached), its settings beside it (model, a reusable prompt and its variables, parameters,
// tools); the answer streams, function calls are answered by hand, a response can be stopped.

import { get, post } from "./api.js";
import { append, clear, errorBox, field, h, link, raw } from "./dom.js";
import { itemView } from "./items.js";
import { cancel, speed, stream } from "./run.js";

export const EFFORTS = ["", "none", "minimal", "low", "medium", "high"];
const FINISHED = new Set(["completed", "incomplete", "failed", "cancelled"]);

export async function modelOptions(select, chosen) {
  const models = (await get("/v1/models")).data.map((model) => model.id);
  clear(select);
  for (const id of models) select.append(h("option", { value: id, selected: id === chosen }, id));
  return models;
}

function parseJson(text, what) {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not valid JSON: ${error.message}`);
  }
}

/** The tools of the form: function tools as JSON, MCP servers as "label URL" lines. */
function toolsOf(form) {
  const tools = [];
  const functions = parseJson(form.tools.value, "Function tools");
  if (functions) tools.push(...(Array.isArray(functions) ? functions : [functions]));
  for (const line of form.mcp.value.split("\n").map((text) => text.trim()).filter(Boolean)) {
    const [label, url] = line.split(/\s+/);
    if (!url) throw new Error(`MCP server line "${line}": write a label, a space, and the server URL.`);
    tools.push({ type: "mcp", server_label: label, server_url: url, require_approval: "never" });
  }
  return tools;
}

function textFormat(form) {
  const kind = form.format.value;
  if (kind === "json_schema") {
    const schema = parseJson(form.schema.value, "The JSON schema") || { type: "object" };
    return { format: { type: "json_schema", name: "answer", schema, strict: true } };
  }
  return kind === "text" ? undefined : { format: { type: kind } };
}

/** A reusable prompt's reference: the prompt picked, its version, its variables ("name=value" lines). */
function promptOf(form) {
  if (!form.prompt.value) return undefined;
  const [id, version] = form.prompt.value.split("@");
  const variables = {};
  for (const line of form.variables.value.split("\n").map((text) => text.trim()).filter(Boolean)) {
    const at = line.indexOf("=");
    if (at < 1) throw new Error(`Prompt variable "${line}": write name=value.`);
    variables[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return { id, version, variables };
}

/** The files chosen to attach, as input parts: images as `input_image`, the rest as `input_file`. */
async function attachedParts(input) {
  const parts = [];
  for (const file of input.files) {
    const data = await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
    parts.push(file.type.startsWith("image/") ? { type: "input_image", image_url: data, detail: "auto" }
      : { type: "input_file", filename: file.name, file_data: data });
  }
  return parts;
}

/** The request the form describes, for `input` (a string or items). */
function requestOf(form, input, continued) {
  const body = { model: form.model.value, input, store: true };
  const prompt = promptOf(form);
  if (prompt) body.prompt = prompt;
  if (form.instructions.value.trim()) body.instructions = form.instructions.value;
  if (form.temperature.value !== "") body.temperature = Number(form.temperature.value);
  if (form.max_output_tokens.value !== "") body.max_output_tokens = Number(form.max_output_tokens.value);
  if (form.effort.value) body.reasoning = { effort: form.effort.value, summary: "auto" };
  const text = textFormat(form);
  if (text) body.text = text;
  const tools = toolsOf(form);
  if (tools.length) body.tools = tools;
  if (form.background.checked) body.background = true;
  Object.assign(body, continued);
  return body;
}

function stats(state) {
  const { usage, ttft, rate } = speed(state);
  const response = state.response || {};
  return h("div", { class: "stats" },
    response.id ? link(`#/responses/${response.id}`, response.id) : null,
    h("span", { class: `status ${response.status || ""}`, "data-status": response.status || "" }, response.status || "sending"),
    usage ? h("span", { class: "usage" }, `${usage.input_tokens} in · ${usage.output_tokens} out · ${usage.total_tokens} total tokens`) : null,
    ttft !== null ? h("span", { class: "ttft" }, `first token ${Math.round(ttft)} ms`) : null,
    rate !== null ? h("span", { class: "rate" }, `${rate.toFixed(1)} tokens/s`) : null);
}

export function playgroundPage(root) {
  const settings = h("aside", { class: "settings" },
    field("Model", h("select", { name: "model" })),
    field("Reusable prompt", h("select", { name: "prompt" }, h("option", { value: "" }, "none"))),
    field("Prompt variables (one per line: name=value)", h("textarea", { name: "variables", rows: 2, placeholder: "name=Ada" })),
    field("Instructions", h("textarea", { name: "instructions", rows: 2 })),
    h("div", { class: "row" },
      field("Temperature", h("input", { name: "temperature", type: "number", step: "0.1", min: "0", max: "2" })),
      field("Max output tokens", h("input", { name: "max_output_tokens", type: "number", min: "1" })),
      field("Reasoning effort", h("select", { name: "effort" },
        EFFORTS.map((effort) => h("option", { value: effort }, effort || "default")))),
      field("Text format", h("select", { name: "format" },
        ["text", "json_object", "json_schema"].map((kind) => h("option", { value: kind }, kind))))),
    field("JSON schema (text format json_schema)", h("textarea", { name: "schema", rows: 2, placeholder: '{"type": "object", "properties": {...}}' })),
    field("Function tools (JSON array)", h("textarea", { name: "tools", rows: 3, placeholder: '[{"type": "function", "name": "get_weather", "parameters": {...}}]' })),
    field("MCP servers (one per line: label URL)", h("textarea", { name: "mcp", rows: 1, placeholder: "docs https://example.internal/mcp" })),
    h("div", { class: "row" },
      field("Continue with", h("select", { name: "mode" },
        h("option", { value: "chain" }, "previous_response_id"), h("option", { value: "conversation" }, "a conversation"))),
      h("label", { class: "check" }, h("input", { name: "background", type: "checkbox" }), "background")));
  const composer = h("div", { class: "composer" },
    field("Input", h("textarea", { name: "input", rows: 3, required: true, placeholder: "Say something" })),
    h("div", { class: "actions" },
      h("button", { type: "submit", name: "send" }, "Send"),
      h("button", { type: "button", name: "stop", disabled: true }, "Stop"),
      h("label", { class: "attach" }, "Attach files or images ", h("input", { name: "attach", type: "file", multiple: true })),
      h("button", { type: "button", name: "restart", class: "quiet" }, "New conversation")));
  const transcript = h("section", { class: "transcript" });
  const notice = h("div", { class: "notice" });
  // The form holds the settings and the composer; the page lays the transcript out first.
  const form = h("form", { class: "playground-form" }, settings, composer);
  append(clear(root), [h("h1", {}, "Playground"), h("div", { class: "playground" }, h("div", { class: "conversation" }, notice, transcript), form)]);

  let thread = {}; // {previous_response_id} or {conversation} for the next turn
  let running = null; // {controller, responseId}

  modelOptions(form.model, "").catch((error) => notice.replaceChildren(errorBox(error)));
  get("/v1/prompts").then((prompts) => {
    for (const prompt of prompts.data) {
      for (const version of prompt.versions) form.prompt.append(h("option", { value: `${prompt.id}@${version}` }, `${prompt.id} (version ${version})`));
    }
  }).catch(() => { /* no prompts: the picker stays at none */ });

  form.restart.addEventListener("click", () => { thread = {}; clear(transcript); });
  form.stop.addEventListener("click", async () => {
    if (!running) return;
    if (running.responseId) {
      try { await cancel(running.responseId); } catch (error) { notice.replaceChildren(errorBox(error)); }
    } else {
      running.controller.abort();
    }
  });

  async function send(input, userView) {
    clear(notice);
    let body;
    try {
      if (form.mode.value === "conversation" && !thread.conversation) thread = { conversation: (await post("/v1/conversations", {})).id };
      if (form.mode.value === "chain" && thread.conversation) thread = {};
      body = requestOf(form, input, thread);
    } catch (error) {
      notice.replaceChildren(errorBox(error));
      return;
    }
    const turn = h("div", { class: "turn" }, userView);
    const outputView = h("div", { class: "output" });
    const statsView = h("div");
    append(turn, [outputView, statsView]);
    transcript.append(turn);
    running = { controller: new AbortController(), responseId: null };
    form.send.disabled = true;
    form.stop.disabled = false;
    const redraw = (state) => {
      if (state.response && !running.responseId) running.responseId = state.response.id;
      outputView.replaceChildren(...state.output.filter(Boolean).map((item) => itemView(item)));
      statsView.replaceChildren(stats(state), state.error ? errorBox(state.error) : "");
    };
    const state = await stream(body, redraw, running.controller.signal);
    if (state.response && !FINISHED.has(state.response.status)) {
      try { // the stream ended without its terminal event (stopped): read what was stored
        state.response = await get(`/v1/responses/${state.response.id}`);
        state.output = state.response.output || state.output;
      } catch { /* keep what arrived */ }
      redraw(state);
    }
    running = null;
    form.send.disabled = false;
    form.stop.disabled = true;
    if (!state.response) return;
    if (!thread.conversation) thread = { previous_response_id: state.response.id };
    const calls = state.output.filter((item) => item && item.type === "function_call");
    if (calls.length && state.response.status === "completed") outputView.append(answerForm(calls));
    statsView.append(raw(() => state.response));
  }

  /** A form to answer the model's function calls by hand; its outputs are the next turn's input. */
  function answerForm(calls) {
    const answer = h("form", { class: "answer" },
      calls.map((call) => field(`Output of ${call.name} (${call.call_id})`,
        h("textarea", { name: call.call_id, rows: 2, "data-call-id": call.call_id }))),
      h("button", { type: "submit" }, "Send output"));
    answer.addEventListener("submit", (event) => {
      event.preventDefault();
      const outputs = calls.map((call) => ({ type: "function_call_output", call_id: call.call_id, output: answer.elements[call.call_id].value }));
      answer.remove();
      send(outputs, h("div", { class: "user" }, outputs.map((output) => itemView(output))));
    });
    return answer;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = form.input.value;
    if (!text.trim()) return;
    let parts;
    try {
      parts = await attachedParts(form.attach);
    } catch (error) {
      notice.replaceChildren(errorBox(error));
      return;
    }
    form.input.value = "";
    form.attach.value = "";
    const message = { type: "message", role: "user", content: [{ type: "input_text", text }, ...parts] };
    send(parts.length ? [message] : text, h("div", { class: "user" }, itemView(message)));
  });
}
