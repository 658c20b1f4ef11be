// The server's API, called with the key kept in this tab's session storage. Requests go only to the
// server the console came from (relative URLs; the page's Content-Security-Policy forbids the rest).

const KEY = "responsa.apiKey";

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code;
    this.body = body;
  }
}

function headers(extra = {}) {
  const all = { ...extra };
  const key = apiKey();
  if (key) all.authorization = `Bearer ${key}`;
  return all;
}

async function failure(reply) {
  let body = null;
  try { body = await reply.json(); } catch { /* not JSON */ }
  const error = new ApiError(reply.status, body);
  if (reply.status === 401) window.dispatchEvent(new CustomEvent("responsa:auth-required", { detail: error }));
  return error;
}

export async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "content-type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const reply = await fetch(path, init);
  if (!reply.ok) throw await failure(reply);
  return reply.json();
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body);

/** Every item of a paged list (input items, conversation items), oldest first. */
export async function all(path) {
  const items = [];
  let after = null;
  for (;;) {
    const query = new URLSearchParams({ limit: "100", order: "asc" });
    if (after) query.set("after", after);
    const page = await get(`${path}?${query}`);
    items.push(...page.data);
    if (!page.has_more || page.data.length === 0) return items;
    after = page.last_id;
  }
}

/** POST `body` and yield each server-sent event's parsed data (`{type, ...}`). */
export async function* events(path, body, signal) {
  const reply = await fetch(path, {
    method: "POST", body: JSON.stringify(body), signal,
    headers: headers({ "content-type": "application/json", accept: "text/event-stream" }),
  });
  if (!reply.ok) throw await failure(reply);
  const reader = reply.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split("\n").filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart()).join("\n");
      if (data && data !== "[DONE]") yield JSON.parse(data);
    }
  }
}

// The Admin API (/v1/organization/...) takes only an admin key, kept apart from the API key (in this
// tab's session storage too): the usage and projects pages ask for it.
const ADMIN_KEY = "responsa.adminKey";

export function adminKey() {
  return sessionStorage.getItem(ADMIN_KEY) || "";
}

export function setAdminKey(key) {
  if (key) sessionStorage.setItem(ADMIN_KEY, key);
  else sessionStorage.removeItem(ADMIN_KEY);
}

/** A call of the Admin API with the admin key; its failure is an ApiError (401/403: no key or a wrong one). */
export async function admin(method, path, body) {
  const init = { method, headers: { authorization: `Bearer ${adminKey()}` } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const reply = await fetch(`/v1/organization${path}`, init);
  let parsed = null;
  try { parsed = await reply.json(); } catch { /* not JSON */ }
  if (!reply.ok) throw new ApiError(reply.status, parsed);
  return parsed;
}
