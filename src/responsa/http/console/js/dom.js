// Building elements without innerHTML: every text the API returns is set as text, never parsed.

export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "text") element.textContent = value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  append(element, children);
  return element;
}

export function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

/** A "Raw JSON" toggle showing `value` (or what the function returns, read when opened). */
export function raw(value, label = "Raw JSON") {
  const box = h("div", { class: "raw", hidden: true });
  const button = h("button", {
    type: "button", class: "quiet raw-toggle",
    onclick: () => {
      box.hidden = !box.hidden;
      clear(box);
      if (!box.hidden) box.append(json(typeof value === "function" ? value() : value));
    },
  }, label);
  return h("div", { class: "raw-block" }, button, box);
}

export function when(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString();
}

export function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", {}, label), input, hint ? h("small", {}, hint) : null);
}

export function errorBox(error) {
  return h("div", { class: "error", role: "alert" }, error && error.message ? error.message : String(error));
}

export function link(href, text) {
  return h("a", { href }, text);
}
