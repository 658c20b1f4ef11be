// The console's shell: a page per hash route, the API key form, and nothing loaded from elsewhere.

import { apiKey, setApiKey } from "./api.js";
import { batchesPage, webhooksPage } from "./batches.js";
import { clear } from "./dom.js";
import { comparePage } from "./compare.js";
import { conversationPage, conversationsPage } from "./conversations.js";
import { playgroundPage } from "./playground.js";
import { projectsPage } from "./projects.js";
import { responsePage, responsesPage } from "./responses.js";
import { serverPage } from "./server.js";
import { usagePage } from "./usage.js";

const ROUTES = [
  [/^\/responses\/([^/?]+)$/, responsePage, "responses"],
  [/^\/responses$/, responsesPage, "responses"],
  [/^\/compare\/([^/?]+)$/, comparePage, "responses"],
  [/^\/conversations\/([^/?]+)$/, conversationPage, "conversations"],
  [/^\/conversations$/, conversationsPage, "conversations"],
  [/^\/batches$/, batchesPage, "batches"],
  [/^\/webhooks$/, webhooksPage, "webhooks"],
  [/^\/server$/, serverPage, "server"],
  [/^\/usage$/, usagePage, "usage"],
  [/^\/projects$/, projectsPage, "projects"],
  [/^\/playground$/, playgroundPage, "playground"],
];

let leave = null; // what the current page stops (timers) when another opens

function route() {
  const hash = location.hash.replace(/^#/, "") || "/playground";
  const [path, search = ""] = hash.split("?");
  const query = new URLSearchParams(search);
  const root = clear(document.getElementById("page"));
  if (leave) leave();
  leave = null;
  for (const [pattern, page, tab] of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    for (const anchor of document.querySelectorAll("nav a")) anchor.classList.toggle("active", anchor.dataset.page === tab);
    leave = page(root, query, ...match.slice(1).map(decodeURIComponent)) || null;
    return;
  }
  location.hash = "#/playground";
}

function keyForm() {
  const form = document.getElementById("key-form");
  const input = document.getElementById("key-input");
  const show = () => { form.hidden = false; input.value = apiKey(); input.focus(); };
  document.getElementById("key-button").addEventListener("click", show);
  window.addEventListener("responsa:auth-required", show);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    setApiKey(input.value.trim());
    form.hidden = true;
    route();
  });
  document.getElementById("key-forget").addEventListener("click", () => {
    setApiKey("");
    input.value = "";
    route();
  });
}

keyForm();
window.addEventListener("hashchange", route);
route();
