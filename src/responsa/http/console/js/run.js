// One streamed response, folded event by event into the response object it describes, so a page can
// redraw what it has: text, reasoning summaries and tool-call arguments as they arrive.

import { events, post } from "./api.js";

const APPEND = {
  "response.output_text.delta": (item, event) => textPart(item, event, "output_text").text += event.delta,
  "response.refusal.delta": (item, event) => textPart(item, event, "refusal", "refusal").refusal += event.delta,
  "response.reasoning_summary_text.delta": (item, event) => listPart(item, "summary", event.summary_index, "summary_text").text += event.delta,
  "response.reasoning_text.delta": (item, event) => listPart(item, "content", event.content_index, "reasoning_text").text += event.delta,
  "response.function_call_arguments.delta": (item, event) => { item.arguments = (item.arguments || "") + event.delta; },
  "response.custom_tool_call_input.delta": (item, event) => { item.input = (item.input || "") + event.delta; },
  "response.mcp_call_arguments.delta": (item, event) => { item.arguments = (item.arguments || "") + event.delta; },
};

function textPart(item, event, type, key = "text") {
  item.content = item.content || [];
  const index = event.content_index || 0;
  if (!item.content[index]) item.content[index] = { type, [key]: "" };
  return item.content[index];
}

function listPart(item, name, index = 0, type) {
  item[name] = item[name] || [];
  if (!item[name][index]) item[name][index] = { type, text: "" };
  return item[name][index];
}

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed", "response.cancelled"]);

/**
 * Stream a create request. `onChange(state)` is called after every event; the promise resolves with
 * the final state: `{response, output, firstTokenAt, startedAt, endedAt, error}`.
 */
export async function stream(body, onChange, signal) {
  const state = { response: null, output: [], startedAt: performance.now(), firstTokenAt: null, endedAt: null, error: null };
  try {
    for await (const event of events("/v1/responses", { ...body, stream: true }, signal)) {
      fold(state, event);
      onChange(state);
    }
  } catch (error) {
    if (error.name !== "AbortError") state.error = error;
  }
  state.endedAt = performance.now();
  onChange(state);
  return state;
}

function fold(state, event) {
  const type = event.type || "";
  if (event.response) {
    state.response = event.response;
    if (TERMINAL.has(type) && event.response.output) state.output = event.response.output.map((item) => ({ ...item }));
  }
  if (type === "response.output_item.added" || type === "response.output_item.done") {
    state.output[event.output_index] = { ...event.item };
  } else if (APPEND[type]) {
    const item = state.output[event.output_index];
    if (item) APPEND[type](item, event);
  } else if (type === "error") {
    state.error = new Error(event.message || (event.error && event.error.message) || "The stream failed.");
  }
  if (state.firstTokenAt === null && type.endsWith(".delta")) state.firstTokenAt = performance.now();
}

export function cancel(responseId) {
  return post(`/v1/responses/${encodeURIComponent(responseId)}/cancel`, {});
}

/** Usage and speed: time to first token and output tokens per second after it. */
export function speed(state) {
  const usage = (state.response && state.response.usage) || null;
  const ttft = state.firstTokenAt === null ? null : state.firstTokenAt - state.startedAt;
  let rate = null;
  if (usage && state.firstTokenAt !== null && state.endedAt > state.firstTokenAt) {
    rate = usage.output_tokens / ((state.endedAt - state.firstTokenAt) / 1000);
  }
  return { usage, ttft, rate };
}
