import assert from "node:assert/strict";
import { test } from "node:test";

import { configOf, readState, writeState } from "../../../src/rcpkit/console/static/js/state.mjs";

test("a search state survives the round trip through the URL", () => {
  const state = { view: "search", q: "rank fusion", mode: "hybrid", k: 5, mmr: 0.5,
    filters: [{ field: "tag", op: "in", value: "a,b" }, { field: "year", op: "gte", value: "2020" }] };
  const text = writeState(state);
  assert.equal(text.startsWith("?q=rank+fusion"), true);
  assert.equal(text.includes("view="), false); // search is the default view
  assert.deepEqual(readState(text), state);
});

test("unknown views, empty values and bad numbers are dropped when read", () => {
  const state = readState("?view=nope&q=&k=ten&mode=sparse&f=broken&f=tag~eq~x~y");
  assert.deepEqual(state, { view: "search", mode: "sparse", filters: [{ field: "tag", op: "eq", value: "x~y" }] });
});

test("compare reads one configuration per side", () => {
  const state = readState("?view=compare&q=x&a.mode=sparse&b.mode=hybrid&b.fusion=rrf&b.k=3");
  assert.deepEqual(configOf(state, "a."), { mode: "sparse" });
  assert.deepEqual(configOf(state, "b."), { mode: "hybrid", fusion: "rrf", k: 3 });
});
