// One element per Responses item (input or output), with its raw JSON a click away.

import { h, raw } from "./dom.js";

function partText(part) {
  switch (part.type) {
    case "input_text":
    case "output_text": {
      const cited = (part.annotations || []).filter((note) => note.type === "file_citation");
      return h("div", {}, h("div", { class: "text" }, part.text || ""),
        cited.length ? h("small", { class: "muted citations" }, `Sources: ${cited.map((note) => note.filename).join(", ")}`) : null);
    }
    case "text":
    case "summary_text":
    case "reasoning_text":
      return h("div", { class: "text" }, part.text || "");
    case "refusal":
      return h("div", { class: "text refusal" }, `Refusal: ${part.refusal || ""}`);
    case "input_image":
      return (part.image_url || "").startsWith("data:image/") ? h("img", { class: "thumb", src: part.image_url, alt: "an attached image" })
        : h("div", { class: "muted" }, `[image ${part.file_id || (part.image_url || "").slice(0, 60)}]`);
    case "input_file":
      return h("div", { class: "muted" }, `[file ${part.filename || part.file_id || ""}]`);
    default:
      return h("div", { class: "muted" }, `[${part.type}]`);
  }
}

function content(value) {
  if (typeof value === "string") return [h("div", { class: "text" }, value)];
  return (value || []).map(partText);
}

function callLine(name, args) {
  return h("div", { class: "call" }, h("code", {}, name || "?"), h("pre", { class: "args" }, args || ""));
}

function body(item) {
  switch (item.type) {
    case "message":
      return content(item.content);
    case "reasoning": {
      const summary = (item.summary || []).map(partText);
      const thoughts = (item.content || []).map(partText);
      return [...summary, ...(thoughts.length ? [h("details", {}, h("summary", {}, "Reasoning"), thoughts)] : [])];
    }
    case "function_call":
      return [callLine(item.name, item.arguments), h("small", { class: "muted" }, `call_id ${item.call_id || ""}`)];
    case "custom_tool_call":
      return [callLine(item.name, item.input), h("small", { class: "muted" }, `call_id ${item.call_id || ""}`)];
    case "function_call_output":
    case "custom_tool_call_output":
      return [h("small", { class: "muted" }, `call_id ${item.call_id || ""}`),
        h("pre", { class: "output" }, typeof item.output === "string" ? item.output : JSON.stringify(item.output))];
    case "mcp_call":
      return [callLine(`${item.server_label}.${item.name}`, item.arguments),
        item.output != null ? h("pre", { class: "output" }, item.output) : null,
        item.error ? h("div", { class: "error" }, typeof item.error === "string" ? item.error : JSON.stringify(item.error)) : null];
    case "file_search_call":
      return [h("div", {}, `Searched for: ${(item.queries || []).join("; ")}`),
        ...(item.results || []).map((hit) => h("div", { class: "hit" },
          h("small", { class: "muted" }, `${hit.filename} · score ${Number(hit.score).toFixed(3)}`),
          h("div", { class: "text" }, hit.text)))];
    case "mcp_list_tools":
      return [h("div", {}, `${item.server_label}: ${(item.tools || []).map((tool) => tool.name).join(", ") || "no tools"}`)];
    case "mcp_approval_request":
      return [callLine(`${item.server_label}.${item.name}`, item.arguments)];
    case "mcp_approval_response":
      return [h("div", {}, `${item.approve ? "approved" : "denied"} ${item.approval_request_id || ""}`)];
    default:
      return [];
  }
}

function title(item) {
  if (item.type === "message") return `${item.role || "message"}`;
  return item.type;
}

/** The element of one item; `extra` goes under its body (a form to answer a call, say). */
export function itemView(item, extra) {
  const status = item.status && item.status !== "completed" ? h("span", { class: `status ${item.status}` }, item.status) : null;
  return h("article", { class: `item item-${item.type} role-${item.role || "none"}`, "data-type": item.type },
    h("header", {}, h("strong", {}, title(item)), status, h("small", { class: "muted id" }, item.id || "")),
    body(item), extra || null, raw(item));
}

export function itemsView(items, emptyText = "None.") {
  if (!items || items.length === 0) return h("p", { class: "muted" }, emptyText);
  return h("div", { class: "items" }, items.map((item) => itemView(item)));
}

/** The text a response's output says, for list previews. */
export function outputText(response) {
  const texts = [];
  for (const item of response.output || []) {
    if (item.type === "message") for (const part of item.content || []) if (part.text) texts.push(part.text);
    if (item.type === "function_call") texts.push(`${item.name}(${item.arguments || ""})`);
  }
  return texts.join(" ");
}
