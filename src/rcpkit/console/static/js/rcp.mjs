// A JSON-RPC 2.0 client over RCP's HTTP binding (§5.2): POST <base>/<method>, the
// token in Authorization (never in params, §15.6), RCP-Session when the server is
// stateful. Failures are RcpFailure values with a kind the views can explain.

export class RcpFailure extends Error {
  constructor(kind, message, { status, code, data } = {}) {
    super(message);
    this.kind = kind; // "auth" | "rpc" | "http" | "network"
    this.status = status;
    this.code = code;
    this.data = data;
  }
}

/** What a failed exchange means, in words a person can act on. */
export function describeFailure(status, body) {
  const error = body && typeof body === "object" ? body.error : undefined;
  if (status === 401) {
    return new RcpFailure("auth", "The server refused the token (401 Unauthorized): enter a valid token.", { status, code: error?.code });
  }
  if (status === 403) {
    const why = error?.message ? `: ${error.message}` : "";
    return new RcpFailure("auth", `The server refused this call (403 Forbidden${why}).`, { status, code: error?.code });
  }
  if (error) {
    const field = error.data?.field ? ` (${error.data.field})` : "";
    return new RcpFailure("rpc", `${error.message}${field} [${error.code}]`, { status, code: error.code, data: error.data });
  }
  return new RcpFailure("http", `The server answered HTTP ${status}.`, { status });
}

export class RcpClient {
  /** ``base``: "/rcp" on this origin, or an absolute URL; ``fetcher``: fetch (tests pass their own). */
  constructor(base, { token = null, fetcher = globalThis.fetch.bind(globalThis) } = {}) {
    this.base = String(base).replace(/\/+$/, "");
    this.token = token;
    this.session = null;
    this.fetcher = fetcher;
    this.nextId = 1;
  }

  headers() {
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (this.session) headers["RCP-Session"] = this.session;
    return headers;
  }

  async call(method, params = {}) {
    const id = this.nextId++;
    let response;
    try {
      response = await this.fetcher(`${this.base}/${method}`, {
        method: "POST",
        headers: this.headers(),
        body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
        credentials: "omit",
      });
    } catch (error) {
      throw new RcpFailure("network", `Cannot reach ${this.base} (${error.message}). Is the server running, and does it allow this origin (--cors-origin)?`);
    }
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (response.status !== 200 || !body || body.error || !("result" in body)) {
      throw describeFailure(response.status, body);
    }
    return body.result;
  }

  /** §7.1: the handshake; keeps a stateful server's session token (§5.2). */
  async initialize() {
    const result = await this.call("initialize", {
      protocolVersion: 1,
      client: { name: "rcpkit-console", version: "1" },
      capabilities: {},
    });
    const session = result?._meta?.session;
    if (typeof session === "string") this.session = session;
    return result;
  }

  /** GET the Prometheus exposition at ``url`` with the same credentials. */
  async metrics(url) {
    const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    let response;
    try {
      response = await this.fetcher(url, { headers, credentials: "omit" });
    } catch (error) {
      throw new RcpFailure("network", `Cannot read ${url} (${error.message}).`);
    }
    if (response.status !== 200) throw describeFailure(response.status, null);
    return response.text();
  }
}
