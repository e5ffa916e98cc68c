import assert from "node:assert/strict";
import { test } from "node:test";

import { RcpClient } from "../../../src/rcpkit/console/static/js/rcp.mjs";

function fetcher(status, body, seen = []) {
  return async (url, init) => {
    seen.push({ url, init });
    return { status, json: async () => body, text: async () => JSON.stringify(body) };
  };
}

test("a call posts JSON-RPC to <base>/<method> with the token as a bearer header", async () => {
  const seen = [];
  const client = new RcpClient("/rcp/", { token: "t0k", fetcher: fetcher(200, { jsonrpc: "2.0", id: 1, result: { ok: 1 } }, seen) });
  assert.deepEqual(await client.call("retrieve", { query: "q" }), { ok: 1 });
  assert.equal(seen[0].url, "/rcp/retrieve");
  assert.equal(seen[0].init.headers.Authorization, "Bearer t0k");
  const body = JSON.parse(seen[0].init.body);
  assert.deepEqual([body.jsonrpc, body.method, body.params], ["2.0", "retrieve", { query: "q" }]);
  assert.equal("token" in body.params, false); // §15.6: never in params
});

test("a 401 is an auth failure that says the token was refused", async () => {
  const client = new RcpClient("/rcp", { token: "bad", fetcher: fetcher(401, { error: { code: -32012, message: "unauthorized" } }) });
  await assert.rejects(client.call("ping"), (error) => error.kind === "auth" && /refused the token/.test(error.message));
});

test("a JSON-RPC error names its code and field", async () => {
  const body = { jsonrpc: "2.0", id: 1, error: { code: -32602, message: "bad value", data: { field: "filter" } } };
  const client = new RcpClient("/rcp", { fetcher: fetcher(200, body) });
  await assert.rejects(client.call("retrieve"), (error) => error.kind === "rpc" && error.message === "bad value (filter) [-32602]");
});

test("a stateful server's session token is sent back as RCP-Session", async () => {
  const seen = [];
  const client = new RcpClient("/rcp", { fetcher: fetcher(200, { result: { _meta: { session: "s1" } } }, seen) });
  await client.initialize();
  await client.call("ping");
  assert.equal(seen[1].init.headers["RCP-Session"], "s1");
});
