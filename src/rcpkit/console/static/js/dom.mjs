// A few DOM helpers: elements from (tag, attributes, children), never from HTML strings,
// so text from the index can never become markup.

const SVG = "http://www.w3.org/2000/svg";

export function h(tag, attributes = {}, ...children) {
  return fill(document.createElement(tag), attributes, children);
}

export function svg(tag, attributes = {}, ...children) {
  return fill(document.createElementNS(SVG, tag), attributes, children);
}

function fill(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      element.setAttribute("class", value);
    } else if (name in element && typeof value !== "string" && element.namespaceURI !== SVG) {
      element[name] = value; // properties: checked, value, selected
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function replaceChildren(element, ...children) {
  element.replaceChildren();
  return fill(element, {}, children);
}

/** A labelled <select> of ``choices`` ([value, label] or value), ``current`` selected. */
export function select(id, label, choices, current, extra = {}) {
  const options = choices.map((choice) => {
    const [value, text] = Array.isArray(choice) ? choice : [choice, choice];
    return h("option", { value, selected: String(value) === String(current ?? "") }, text);
  });
  return h("div", { class: "field" }, h("label", { for: id }, label), h("select", { id, name: id, ...extra }, options));
}

/** A labelled <input>. */
export function input(id, label, attributes = {}) {
  return h("div", { class: "field" }, h("label", { for: id }, label), h("input", { id, name: id, ...attributes }));
}

/** A link that is safe to follow: http(s) only (a file:// URI is shown as text). */
export function safeLink(uri, text) {
  if (typeof uri === "string" && /^https?:\/\//i.test(uri)) {
    return h("a", { href: uri, rel: "noreferrer noopener", target: "_blank" }, text ?? uri);
  }
  return h("span", { class: "uri" }, text ?? uri ?? "");
}

/** A score for people: fixed digits, or 1.3e-6 when fixed digits would read as zero. */
export function number(value, digits = 3) {
  if (typeof value !== "number") return String(value ?? "–");
  if (value !== 0 && Math.abs(value) < 10 ** -digits) return value.toExponential(1);
  return value.toFixed(digits);
}
