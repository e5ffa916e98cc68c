import assert from "node:assert/strict";
import { test } from "node:test";

import { advertisedFields, coerceValue, filterTree, operatorsFor } from "../../../src/rcpkit/console/static/js/filters.mjs";

const FIELDS = advertisedFields({ fields: { year: "int", tag: "keyword", path: "text" } });

test("advertised fields are read from an object of types or a plain list", () => {
  assert.deepEqual(FIELDS.map((field) => field.name), ["path", "tag", "year"]);
  assert.deepEqual(advertisedFields({ fields: ["lang"] }), [{ name: "lang", type: "keyword" }]);
  assert.deepEqual(advertisedFields(undefined), []);
});

test("operators follow the field type and stay within those advertised", () => {
  assert.equal(operatorsFor("int", []).includes("gte"), true);
  assert.equal(operatorsFor("keyword", []).includes("gte"), false);
  assert.deepEqual(operatorsFor("int", ["eq", "gte", "contains"]), ["eq", "gte"]);
});

test("values are typed for the field and operator, and nonsense is refused", () => {
  assert.equal(coerceValue("int", "gte", " 2020 "), 2020);
  assert.deepEqual(coerceValue("keyword", "in", "a, b,,c"), ["a", "b", "c"]);
  assert.equal(coerceValue("keyword", "exists", ""), true);
  assert.throws(() => coerceValue("int", "eq", "2020.5"), /integer/);
  assert.throws(() => coerceValue("keyword", "eq", "  "), /needs a value/);
});

test("rows become one leaf, an and of leaves, or nothing", () => {
  assert.equal(filterTree([], FIELDS), undefined);
  assert.deepEqual(filterTree([{ field: "tag", op: "eq", value: "x" }], FIELDS), { field: "tag", op: "eq", value: "x" });
  assert.deepEqual(
    filterTree([{ field: "tag", op: "eq", value: "x" }, { field: "year", op: "lt", value: "3" }], FIELDS),
    { and: [{ field: "tag", op: "eq", value: "x" }, { field: "year", op: "lt", value: 3 }] },
  );
  assert.throws(() => filterTree([{ field: "secret", op: "eq", value: "x" }], FIELDS), /does not filter/);
});
