// Index: what `rcpkit stats` prints (x-rcpkit/stats) and a way into the document view
// (x-rcpkit/document). Both are read-only rcpkit extensions (§6.2), used only when the
// server advertises `x-rcpkit`; any other server shows its identity and model.

import { h, replaceChildren } from "../dom.mjs";
import { writeState } from "../state.mjs";

export const EXTENSION = "x-rcpkit";

export function offers(capabilities, method) {
  return (capabilities?.[EXTENSION]?.methods || []).includes(method);
}

export function renderIndex(app) {
  const capabilities = app.info.capabilities;
  const figures = h("dl", { class: "facts", id: "index-stats" });
  const identity = [
    ["server", `${app.info.server?.name ?? "?"} ${app.info.server?.version ?? ""}`],
    ["embedder", capabilities.embed ? `${capabilities.embed.identity} (${capabilities.embed.dimension} dimensions)` : "none advertised"],
  ];
  replaceChildren(figures, facts(identity));
  const view = h("div", { class: "view-index" }, h("h2", {}, "Index"), figures);
  if (offers(capabilities, `${EXTENSION}/stats`)) {
    loadStats(app, figures, identity, capabilities);
  } else {
    view.append(h("p", { class: "notice" }, "This server does not offer index statistics (the x-rcpkit/stats extension)."));
  }
  if (offers(capabilities, `${EXTENSION}/document`)) {
    const form = h("form", { id: "document-form", onsubmit: (event) => {
      event.preventDefault();
      const id = form.elements.namedItem("doc-id").value.trim();
      if (id) app.navigate({ view: "document", id, filters: [] });
    } },
      h("h2", {}, "Open a document"),
      h("div", { class: "query-row" }, h("label", { for: "doc-id" }, "Document id"),
        h("input", { id: "doc-id", name: "doc-id", type: "text", placeholder: "a hit's chunk.docId" }),
        h("button", { type: "submit" }, "Open")));
    view.append(form);
  }
  return view;
}

async function loadStats(app, figures, identity, capabilities) {
  try {
    const stats = await app.client.call(`${EXTENSION}/stats`, {});
    const size = stats.sizeBytes;
    // The model once: the handshake's embedder, else the one the index records.
    const recorded = !capabilities.embed && stats.embedder ? `${stats.embedder} (${stats.dimension} dimensions)` : null;
    replaceChildren(figures, facts([
      ...identity.map(([label, value]) => [label, label === "embedder" && recorded ? recorded : value]),
      ["documents", `${stats.documents} (${stats.ingested} from rcpkit index)`],
      ["chunks", stats.chunks],
      ["version", `${stats.version} (servable from ${stats.floor})`],
      ["tenants", stats.tenants ?? "your tenant only"],
      ["size", typeof size === "number" ? `${(size / 1e6).toFixed(1)} MB on disk` : "unknown"],
      ["source root", stats.root ?? "none recorded"],
      ["last write", stats.lastWrite ?? "unknown"],
    ]));
  } catch (error) {
    app.fail(error);
  }
}

function facts(rows) {
  return rows.map(([label, value]) => h("div", {}, h("dt", {}, label), h("dd", { "data-fact": label }, String(value))));
}

export function documentHref(id, extra = {}) {
  return `/ui${writeState({ view: "document", id, ...extra })}`;
}
