import assert from "node:assert/strict";
import { test } from "node:test";

import { retrieveParams } from "../../../src/rcpkit/console/static/js/params.mjs";

const CAPABILITIES = {
  retrieve: { maxK: 20, modes: ["dense", "sparse", "hybrid"], fusion: ["rrf", "convex"], mmr: true,
    units: ["chunk", "document"], tokenBudget: true, snapshots: true, rerankBuiltin: true, defaultMode: "hybrid" },
  rerank: { methods: ["cross-encoder"] },
  filter: { fields: { tag: "keyword" } },
};

test("every advertised option becomes its retrieve param", () => {
  const params = retrieveParams("q", { mode: "hybrid", fusion: "convex", k: 50, unit: "document",
    rerank: "cross-encoder", mmr: 0.7, budget: 300 }, CAPABILITIES,
  { filters: [{ field: "tag", op: "eq", value: "x" }], fields: [{ name: "tag", type: "keyword" }], indexVersion: 7 });
  assert.deepEqual(params, {
    query: "q", k: 20, mode: "hybrid", fusion: { method: "convex" }, unit: "document",
    rerank: { method: "cross-encoder" }, mmr: { lambda: 0.7 }, tokenBudget: 300,
    filter: { field: "tag", op: "eq", value: "x" }, indexVersion: "7",
  });
});

test("options the server does not advertise are left out, not sent to fail", () => {
  const bare = { retrieve: { modes: ["sparse"] } };
  const params = retrieveParams("q", { mode: "dense", fusion: "rrf", rerank: "colbert", mmr: 0.5, budget: 10 }, bare);
  assert.deepEqual(params, { query: "q", k: 10 });
});

test("fusion applies to hybrid only, the server's default mode included", () => {
  assert.equal(retrieveParams("q", { mode: "sparse", fusion: "rrf" }, CAPABILITIES).fusion, undefined);
  assert.deepEqual(retrieveParams("q", { fusion: "rrf" }, CAPABILITIES).fusion, { method: "rrf" });
});
