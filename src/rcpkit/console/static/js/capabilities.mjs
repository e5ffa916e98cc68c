// The handshake's capabilities (§6) as rows people read: one row per capability, its
// metadata as "key: value" facts (nested objects by dotted keys, lists joined, flags as
// yes/no) instead of raw JSON. Pure: tested under `node --test`.

/** [{name, facts: [[key, text]]}] for ``capabilities``, sorted by name. */
export function capabilityRows(capabilities) {
  return Object.keys(capabilities || {}).sort().map((name) => ({ name, facts: factsOf(capabilities[name]) }));
}

function factsOf(value, prefix = "") {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return [[prefix || "value", text(value)]];
  }
  const keys = Object.keys(value);
  if (!keys.length) return prefix ? [[prefix, "offered"]] : [];
  return keys.flatMap((key) => {
    const inner = value[key];
    const name = prefix ? `${prefix}.${key}` : key;
    const nested = inner !== null && typeof inner === "object" && !Array.isArray(inner);
    return nested ? factsOf(inner, name) : [[name, text(inner)]];
  });
}

function text(value) {
  if (value === true) return "yes";
  if (value === false) return "no";
  if (Array.isArray(value)) {
    if (!value.length) return "none";
    return value.map((item) => (item !== null && typeof item === "object" ? JSON.stringify(item) : String(item))).join(", ");
  }
  return String(value);
}
