// Conversations: open one by id and see its items and the responses that belong to it.

import { all, get } from "./api.js";
import { append, errorBox, field, h, raw, when } from "./dom.js";
import { itemsView } from "./items.js";
import { responsesTable } from "./responses.js";

export function conversationsPage(root) {
  const form = h("form", { class: "row" },
    field("Conversation id", h("input", { name: "id", placeholder: "conv_...", required: true })),
    h("button", { type: "submit" }, "Open"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `#/conversations/${encodeURIComponent(form.id.value.trim())}`;
  });
  append(root, [h("h1", {}, "Conversations"),
    h("p", { class: "muted" }, "A response's page links to its conversation; or open one by its id."), form]);
}

export function conversationPage(root, _query, id) {
  const body = h("div", { class: "loading" }, "Loading…");
  append(root, [h("h1", {}, "Conversation ", h("code", {}, id)), body]);
  (async () => {
    const conversation = await get(`/v1/conversations/${encodeURIComponent(id)}`);
    const [items, responses] = await Promise.all([
      all(`/v1/conversations/${encodeURIComponent(id)}/items`),
      get(`/v1/responses?conversation=${encodeURIComponent(id)}&order=asc&limit=100`),
    ]);
    body.className = "";
    body.replaceChildren(
      h("p", {}, `Created ${when(conversation.created_at)}`),
      Object.keys(conversation.metadata || {}).length ? h("pre", { class: "json" }, JSON.stringify(conversation.metadata, null, 2)) : "",
      h("section", {}, h("h2", {}, "Responses"), responses.data.length ? responsesTable(responses.data) : h("p", { class: "muted" }, "None stored.")),
      h("section", {}, h("h2", {}, "Items"), itemsView(items, "No items.")),
      raw(conversation));
  })().catch((error) => body.replaceChildren(errorBox(error)));
}
