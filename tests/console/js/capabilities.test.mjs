import assert from "node:assert/strict";
import { test } from "node:test";

import { capabilityRows } from "../../../src/rcpkit/console/static/js/capabilities.mjs";

test("capabilities read as facts: lists joined, flags as yes/no, nesting by dotted keys", () => {
  const rows = capabilityRows({
    retrieve: { modes: ["dense", "hybrid"], mmr: true, maxK: 100, cursor: { ttlSeconds: 600 } },
    embed: { identity: "minilm", dimension: 384 },
    cancel: {},
  });
  assert.deepEqual(rows.map((row) => row.name), ["cancel", "embed", "retrieve"]);
  assert.deepEqual(rows[0].facts, []);
  assert.deepEqual(rows[2].facts, [
    ["modes", "dense, hybrid"], ["mmr", "yes"], ["maxK", "100"], ["cursor.ttlSeconds", "600"],
  ]);
});

test("an empty nested object is offered, an empty list is none, a bare value is its value", () => {
  const rows = capabilityRows({ filter: { fields: {}, operators: [] }, log: true });
  assert.deepEqual(rows[0].facts, [["fields", "offered"], ["operators", "none"]]);
  assert.deepEqual(rows[1].facts, [["value", "yes"]]);
});
