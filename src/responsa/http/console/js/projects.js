// The projects page: projects (made, archived), each one's keys (made, shown once, revoked), model
// rate limits per model and spend limit, through the Admin API with the admin key.

import { admin, adminKey, setAdminKey } from "./api.js";
import { append, errorBox, field, h, when } from "./dom.js";

/** The admin key's form; `then` runs once one is kept. */
export function adminKeyForm(then) {
  const input = h("input", { type: "password", name: "admin-key", autocomplete: "off", placeholder: "sk-admin-..." });
  return h("form", { class: "admin-key", onsubmit: (event) => { event.preventDefault(); setAdminKey(input.value.trim()); then(); } },
    h("p", {}, "This page reads the Admin API: it needs an admin key (--admin-key, or one made by `responsa admin-key`). ",
      "It is kept in this tab's session storage only."),
    h("div", { class: "row" }, field("Admin key", input), h("button", { type: "submit" }, "Use this admin key")));
}

function keysView(project, refresh) {
  const box = h("div", { class: "keys" }, h("div", { class: "loading" }, "Loading keys…"));
  const secret = h("div", { class: "secret", hidden: true });
  const name = h("input", { name: "account", placeholder: "service account name", value: "console" });
  const make = h("form", { class: "row", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const made = await admin("POST", `/projects/${project.id}/service_accounts`, { name: name.value || "console" });
      secret.hidden = false;
      secret.replaceChildren(h("p", {}, "The new key (shown this once):"), h("code", { class: "new-key" }, made.api_key.value));
      load();
    } catch (error) { box.replaceChildren(errorBox(error)); }
  } }, field("New key for", name), h("button", { type: "submit", name: "make-key" }, "Make a key"));
  const load = async () => {
    try {
      const keys = await admin("GET", `/projects/${project.id}/api_keys?limit=100`);
      box.replaceChildren(keys.data.length === 0 ? h("p", { class: "muted" }, "No keys.") :
        h("table", { class: "list" },
          h("thead", {}, h("tr", {}, ["Key", "Owner", "Last used", "Expires", ""].map((text) => h("th", {}, text)))),
          h("tbody", {}, keys.data.map((key) => h("tr", { "data-key": key.id },
            h("td", {}, h("code", {}, key.redacted_value)),
            h("td", {}, key.owner.service_account ? key.owner.service_account.name : ""),
            h("td", {}, key.last_used_at ? when(key.last_used_at) : "never"),
            h("td", {}, key.expires_at ? when(key.expires_at) : "never"),
            h("td", {}, key.id.startsWith("key_file_") ? h("span", { class: "muted" }, "keys file") :
              h("button", { type: "button", class: "quiet", name: "revoke", onclick: async () => {
                await admin("DELETE", `/projects/${project.id}/api_keys/${key.id}`);
                load();
              } }, "Revoke")))))));
    } catch (error) { box.replaceChildren(errorBox(error)); }
  };
  load();
  return [project.status === "active" ? make : null, secret, box];
}

function spendView(project) {
  const shown = h("p", { class: "spend" }, "…");
  const cents = h("input", { name: "limit", type: "number", min: "0", placeholder: "US cents a month" });
  const load = async () => {
    try {
      const limit = await admin("GET", `/projects/${project.id}/spend_limit`);
      shown.textContent = `Limit $${(limit.threshold_amount / 100).toFixed(2)} a month · ${limit.enforcement.status}`;
    } catch (error) {
      shown.textContent = error.status === 404 ? "No spend limit." : error.message;
    }
  };
  load();
  const form = h("form", { class: "row", onsubmit: async (event) => {
    event.preventDefault();
    try {
      await admin("POST", `/projects/${project.id}/spend_limit`, { threshold_amount: Number(cents.value), currency: "USD", interval: "month" });
      load();
    } catch (error) { shown.textContent = error.message; }
  } }, field("Spend limit (cents)", cents), h("button", { type: "submit", class: "quiet" }, "Set"));
  return [shown, project.status === "active" ? form : null];
}

const LIMITS = [["max_requests_per_1_minute", "Requests / min"], ["max_tokens_per_1_minute", "Tokens / min"],
  ["max_requests_per_1_day", "Requests / day"]];

function limitsView(project) {
  const box = h("div", { class: "rate-limits" }, h("div", { class: "loading" }, "Loading limits…"));
  const editable = project.status === "active";
  const row = (limit) => {
    const inputs = LIMITS.map(([name]) => h("input", { name, type: "number", min: "0", value: String(limit[name] || 0) }));
    const save = h("button", { type: "button", class: "quiet", name: "set-limits", onclick: async () => {
      try {
        const body = Object.fromEntries(LIMITS.map(([name], index) => [name, Number(inputs[index].value)]));
        await admin("POST", `/projects/${project.id}/rate_limits/${limit.id}`, body);
        load();
      } catch (error) { box.replaceChildren(errorBox(error)); }
    } }, "Set");
    return h("tr", { "data-model": limit.model }, h("td", {}, h("code", {}, limit.model)),
      ...inputs.map((input, index) => h("td", {}, editable ? input : String(limit[LIMITS[index][0]] || 0))),
      h("td", {}, editable ? save : null));
  };
  const load = async () => {
    try {
      const limits = await admin("GET", `/projects/${project.id}/rate_limits?limit=100`);
      box.replaceChildren(h("p", { class: "muted" }, "0: no limit of the project's own for the model."),
        h("table", { class: "list" },
          h("thead", {}, h("tr", {}, ["Model", ...LIMITS.map(([, label]) => label), ""].map((text) => h("th", {}, text)))),
          h("tbody", {}, limits.data.map(row))));
    } catch (error) { box.replaceChildren(errorBox(error)); }
  };
  load();
  return box;
}

function projectView(project, refresh) {
  return h("section", { class: "project", "data-project": project.id },
    h("h2", {}, `${project.name} `, h("small", { class: "muted" }, project.id), " ",
      h("span", { class: `status ${project.status === "active" ? "completed" : "cancelled"}` }, project.status)),
    h("div", { class: "actions" },
      project.status === "active" && project.id !== "default" ? h("button", { type: "button", class: "quiet", name: "archive", onclick: async () => {
        try { await admin("POST", `/projects/${project.id}/archive`); refresh(); } catch (error) { alert(error.message); }
      } }, "Archive") : null),
    h("h3", {}, "Keys"), keysView(project, refresh),
    h("details", { class: "limits" }, h("summary", {}, h("h3", {}, "Rate limits per model")), limitsView(project)),
    h("h3", {}, "Spend"), spendView(project));
}

export function projectsPage(root) {
  const body = h("div", {});
  const archived = h("input", { type: "checkbox", name: "archived" });
  const name = h("input", { name: "name", placeholder: "a new project's name" });
  const show = async () => {
    if (!adminKey()) {
      body.replaceChildren(adminKeyForm(show));
      return;
    }
    try {
      const projects = await admin("GET", `/projects?limit=100&include_archived=${archived.checked}`);
      body.replaceChildren(...projects.data.map((project) => projectView(project, show)));
    } catch (error) {
      body.replaceChildren(...[errorBox(error), error.status === 401 || error.status === 403 ? adminKeyForm(show) : null].filter(Boolean));
    }
  };
  const create = h("form", { class: "row new-project", onsubmit: async (event) => {
    event.preventDefault();
    if (!name.value.trim()) return;
    try { await admin("POST", "/projects", { name: name.value.trim() }); name.value = ""; show(); } catch (error) { body.prepend(errorBox(error)); }
  } }, field("New project", name), h("button", { type: "submit", name: "create" }, "Create"),
    h("label", { class: "check" }, archived, "show archived"));
  archived.addEventListener("change", show);
  append(root, [h("h1", {}, "Projects"), create, body]);
  show();
}
