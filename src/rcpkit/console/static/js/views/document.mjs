// A document as stored (what `rcpkit show` prints and citation offsets index), its
// chunks marked where they start, and the span a hit cited highlighted.

import { h, replaceChildren, safeLink } from "../dom.mjs";
import { documentSegments } from "../highlight.mjs";
import { documentHref, EXTENSION, offers } from "./index.mjs";

export function renderDocument(app, state) {
  if (!offers(app.info.capabilities, `${EXTENSION}/document`)) {
    return h("p", { class: "notice" }, "This server does not offer stored documents (the x-rcpkit/document extension).");
  }
  if (!state.id) return h("p", { class: "notice" }, "No document id given.");
  const view = h("div", { class: "view-document" }, h("p", {}, "Loading…"));
  loadDocument(app, state, view);
  return view;
}

async function loadDocument(app, state, view) {
  const offset = Number.isInteger(state.offset) ? state.offset : pageOf(state);
  let document;
  try {
    document = await app.client.call(`${EXTENSION}/document`, { id: state.id, start: offset });
  } catch (error) {
    replaceChildren(view, h("p", { class: "notice" }, `Document ${state.id} could not be read.`));
    app.fail(error);
    return;
  }
  const cited = Number.isInteger(state.start) ? { start: state.start, end: state.end } : null;
  const segments = documentSegments(document.text, document.start, document.chunks, cited);
  const text = h("pre", { class: "document-text", tabindex: "0", "aria-label": "stored text" },
    segments.map((segment) => {
      if (segment.boundary !== undefined) {
        return h("span", { class: "boundary", id: `chunk-${segment.boundary}`, "aria-label": `chunk ${segment.boundary} starts` }, `§${segment.boundary}`);
      }
      return segment.cited ? h("mark", { class: "cited" }, segment.text) : segment.text;
    }));
  const end = document.start + document.text.length;
  const paging = [];
  if (document.start > 0) paging.push(h("a", { href: documentHref(document.id, { offset: Math.max(0, document.start - document.text.length), start: state.start, end: state.end }), "data-nav": "" }, "Previous part"));
  if (end < document.length) paging.push(h("a", { href: documentHref(document.id, { offset: end, start: state.start, end: state.end }), "data-nav": "" }, "Next part"));
  replaceChildren(view,
    h("h2", { id: "document-title" }, document.title || document.id),
    h("dl", { class: "facts" },
      fact("id", document.id), fact("source", document.source), fact("uri", safeLink(document.uri || "")),
      fact("modality", document.modality), fact("arrived by", document.origin),
      fact("length", `${document.length} characters${document.length > document.text.length ? `, showing ${document.start}–${end}` : ""}`),
      fact("chunks", document.chunks.length),
      cited ? fact("cited span", `${cited.start}–${cited.end}`) : null),
    paging.length ? h("p", { class: "paging" }, paging) : null,
    text,
    chunkTable(document));
  view.querySelector("mark.cited")?.scrollIntoView({ block: "center" });
}

// Open the part of a long document that holds the cited span.
function pageOf(state) {
  return Number.isInteger(state.start) && state.start > 100_000 ? state.start - 1000 : 0;
}

function fact(label, value) {
  return h("div", {}, h("dt", {}, label), h("dd", {}, value));
}

function chunkTable(document) {
  return h("table", { class: "chunks" },
    h("caption", {}, "Chunks"),
    h("thead", {}, h("tr", {}, ["chunk", "start", "end", "page", "begins"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, document.chunks.map((chunk) => {
      const local = Math.max(0, chunk.start - document.start);
      return h("tr", {},
        h("td", {}, h("a", { href: `#chunk-${chunk.index}` }, `§${chunk.index}`)),
        h("td", {}, chunk.start), h("td", {}, chunk.end), h("td", {}, chunk.page ?? "–"),
        h("td", {}, document.text.slice(local, local + 80).replace(/\s+/g, " ")));
    })));
}
