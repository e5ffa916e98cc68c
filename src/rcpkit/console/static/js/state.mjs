// The console's state lives in the URL (/ui?view=search&q=...&mode=...), so a search
// can be shared and reloaded. Pure functions: no DOM, tested under `node --test`.

export const VIEWS = ["search", "compare", "index", "document", "health"];

// Keys of one retrieve configuration; Compare prefixes them with "a." and "b.".
export const CONFIG_KEYS = ["mode", "fusion", "k", "unit", "rerank", "mmr", "budget"];

const NUMBERS = new Set(["k", "mmr", "budget", "start", "end", "offset", "pages"]);

/** The state a query string describes (unknown keys and bad numbers are dropped). */
export function readState(search) {
  const params = new URLSearchParams(search);
  const view = params.get("view");
  const state = { view: VIEWS.includes(view) ? view : "search", filters: [] };
  for (const [key, value] of params) {
    if (key === "view") continue;
    if (key === "f") {
      const filter = parseFilterParam(value);
      if (filter) state.filters.push(filter);
      continue;
    }
    const base = key.replace(/^[ab]\./, "");
    if (NUMBERS.has(base)) {
      const number = Number(value);
      if (value !== "" && Number.isFinite(number)) state[key] = number;
    } else if (value !== "") {
      state[key] = value;
    }
  }
  return state;
}

/** The query string for ``state``: empty values and empty filters left out. */
export function writeState(state) {
  const params = new URLSearchParams();
  if (state.view && state.view !== "search") params.set("view", state.view);
  for (const [key, value] of Object.entries(state)) {
    if (key === "view" || key === "filters") continue;
    if (value === undefined || value === null || value === "") continue;
    params.set(key, String(value));
  }
  for (const filter of state.filters || []) {
    if (filter.field && filter.op) params.append("f", filterParam(filter));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

// One filter row in the URL: field~op~value (the value URL-encoded by URLSearchParams).
export function filterParam({ field, op, value }) {
  return `${field}~${op}~${value ?? ""}`;
}

export function parseFilterParam(text) {
  const first = text.indexOf("~");
  const second = first < 0 ? -1 : text.indexOf("~", first + 1);
  if (first <= 0 || second < 0) return null;
  return { field: text.slice(0, first), op: text.slice(first + 1, second), value: text.slice(second + 1) };
}

/** One side's configuration (``prefix`` "a." or "b." in Compare, "" in Search). */
export function configOf(state, prefix = "") {
  const config = {};
  for (const key of CONFIG_KEYS) {
    if (state[prefix + key] !== undefined) config[key] = state[prefix + key];
  }
  return config;
}
