// The §8 filter builder's logic: which operators a field's type allows, how a typed-in
// value becomes JSON, and the tree sent as retrieve.filter. Pure functions.

const ORDERED = ["int", "float", "date"];

/** The advertised fields as [{name, type}] (§6: `filter.fields` is a list or an object). */
export function advertisedFields(filterCapability) {
  const fields = filterCapability?.fields;
  if (Array.isArray(fields)) return fields.map((name) => ({ name, type: "keyword" }));
  if (fields && typeof fields === "object") {
    return Object.entries(fields)
      .map(([name, type]) => ({ name, type: String(type) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
  return [];
}

/** §8's table: the operators that apply to a field of ``type``, within those advertised. */
export function operatorsFor(type, advertised) {
  const allowed = ["eq", "ne", "in", "nin", "exists"];
  if (ORDERED.includes(type)) allowed.push("gt", "gte", "lt", "lte");
  if (type === "text" || type === "keyword") allowed.push("contains");
  const offered = advertised && advertised.length ? new Set(advertised) : null;
  return allowed.filter((op) => !offered || offered.has(op));
}

/** The JSON value of a typed-in ``text`` for ``op`` on a field of ``type``; throws on nonsense. */
export function coerceValue(type, op, text) {
  const raw = String(text ?? "").trim();
  if (op === "exists") {
    if (raw === "" || raw === "true") return true;
    if (raw === "false") return false;
    throw new Error(`exists takes true or false, not "${raw}"`);
  }
  if (op === "in" || op === "nin") {
    const items = raw.split(",").map((item) => item.trim()).filter(Boolean);
    if (!items.length) throw new Error(`${op} takes a comma-separated list`);
    return items.map((item) => scalar(type, item));
  }
  if (raw === "") throw new Error(`${op} needs a value`);
  return scalar(type, raw);
}

function scalar(type, raw) {
  if (type === "int" || type === "float") {
    const number = Number(raw);
    if (!Number.isFinite(number) || (type === "int" && !Number.isInteger(number))) {
      throw new Error(`"${raw}" is not ${type === "int" ? "an integer" : "a number"}`);
    }
    return number;
  }
  if (type === "bool") {
    if (raw === "true" || raw === "false") return raw === "true";
    throw new Error(`"${raw}" is not true or false`);
  }
  return raw;
}

/**
 * The retrieve.filter tree of the builder's rows (undefined when none is complete).
 * Several rows are ANDed; an incomplete row (no field) is skipped.
 */
export function filterTree(rows, fields) {
  const types = new Map(fields.map((field) => [field.name, field.type]));
  const leaves = [];
  for (const row of rows) {
    if (!row.field || !row.op) continue;
    if (!types.has(row.field)) throw new Error(`the server does not filter on "${row.field}"`);
    leaves.push({ field: row.field, op: row.op, value: coerceValue(types.get(row.field), row.op, row.value) });
  }
  if (!leaves.length) return undefined;
  return leaves.length === 1 ? leaves[0] : { and: leaves };
}
