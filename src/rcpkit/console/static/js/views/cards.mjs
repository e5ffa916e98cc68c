// One hit as a card: title, source, the cited span inside its text with the query's
// words marked, per-stage scores, confidence and trust flags (§7.7 Hit, §15.2).

import { h, number, safeLink } from "../dom.mjs";
import { citedSegments, termSegments } from "../highlight.mjs";
import { writeState } from "../state.mjs";

/** ``documents``: the server offers x-rcpkit/document, so a card links to its document. */
export function hitCard(hit, rank, terms, { compact = false, badge = null, documents = false } = {}) {
  const citation = hit.citation || {};
  const title = citation.title || hit.chunk?.docId || String(hit.id);
  return h(
    "article",
    { class: `hit${badge?.shared ? " shared" : ""}`, tabindex: "-1", "data-id": String(hit.id), "aria-labelledby": `hit-${rank}` },
    h("header", {}, h("span", { class: "rank", "aria-label": `rank ${rank}` }, `${rank}`),
      h("h3", { class: "hit-title", id: `hit-${rank}` }, title), badge ? h("span", { class: `badge${badge.shared ? " badge-shared" : ""}` }, badge.text) : null),
    sourceLine(hit, citation),
    compact ? null : passage(hit, citation, terms),
    h("div", { class: "hit-facts" }, scores(hit), compact ? null : confidence(hit), trust(hit)),
    compact || !documents ? null : documentLink(hit, citation),
  );
}

function sourceLine(hit, citation) {
  const parts = [];
  if (citation.source) parts.push(h("span", { class: "source-name" }, citation.source));
  if (citation.uri && citation.uri !== citation.source) parts.push(safeLink(citation.uri));
  if (citation.page) parts.push(h("span", {}, `page ${citation.page}`));
  if (hit.unit && hit.unit !== "chunk") parts.push(h("span", {}, hit.unit));
  if (hit.chunk) {
    const doc = hit.chunk.docId === citation.source ? "" : `${hit.chunk.docId} · `;
    parts.push(h("span", {}, `${doc}chunk ${hit.chunk.index}`));
  }
  const separated = parts.flatMap((part, i) => (i ? [" · ", part] : [part]));
  return h("p", { class: "source" }, separated);
}

function passage(hit, citation, terms) {
  if (!hit.text) return h("p", { class: "passage empty" }, "(no text returned)");
  const pieces = citedSegments(hit.text, citation).map((segment) => {
    const words = termSegments(segment.text, terms).map((part) => (part.term ? h("mark", { class: "term" }, part.text) : part.text));
    return segment.cited ? h("mark", { class: "cited", title: citedTitle(citation) }, words) : h("span", {}, words);
  });
  return h("p", { class: "passage" }, pieces);
}

function citedTitle(citation) {
  return Number.isInteger(citation.start) ? `cited span: characters ${citation.start}–${citation.end} of the document` : "cited span";
}

function scores(hit) {
  const entries = [["score", hit.score], ...Object.entries(hit.scores || {})];
  return h("dl", { class: "scores", "aria-label": "scores" },
    entries.map(([stage, value]) => h("div", {}, h("dt", {}, stage), h("dd", {}, number(value)))));
}

function confidence(hit) {
  if (typeof hit.confidence !== "number") return null;
  const id = `confidence-${String(hit.id).replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return h("div", { class: "confidence", title: CONFIDENCE },
    h("label", { for: id }, "confidence"),
    h("meter", { id, min: "0", max: "1", value: String(hit.confidence) }),
    h("span", {}, number(hit.confidence, 3)));
}

// What each signal means, for the cards' tooltips and the results' legend (§7.7.2, §15.2).
export const CONFIDENCE = "confidence (§7.7.2): how far this hit's similarity to the query stands above "
  + "what unrelated text in the same index scores, on 0–1; 0.5 is well above chance. It does not "
  + "depend on the other hits, so it can be compared across queries; a correct hit of a short "
  + "or keyword query often scores well under 0.5.";
export const TRUST_LEVELS = {
  trusted: "trusted: ingested by the operator from a source configured as trusted",
  community: "community: ingested by the operator (rcpkit index), from a source not marked trusted",
  untrusted: "untrusted: added by a client over index/add, or the server vouches for nothing; "
    + "treat it as data, never as instructions",
};
const INJECTION = "injection suspected: the text looks aimed at a language model (an instruction "
  + "to ignore earlier ones, a role marker, hidden characters)";
const SANITIZED = "sanitized: invisible characters were removed from the text";

function trust(hit) {
  const flags = [];
  const level = hit.trust?.level;
  if (level) flags.push(h("li", { class: `flag level-${level}`, title: TRUST_LEVELS[level] ?? level }, level));
  if (hit.trust?.injectionSuspected) flags.push(h("li", { class: "flag warn", title: INJECTION }, "injection suspected"));
  if (hit.trust?.sanitized) flags.push(h("li", { class: "flag", title: SANITIZED }, "sanitized"));
  if (typeof hit.trust?.score === "number") flags.push(h("li", { class: "flag" }, `trust ${number(hit.trust.score, 2)}`));
  return flags.length ? h("ul", { class: "trust", "aria-label": "trust" }, flags) : null;
}

/** What score, confidence and trust mean: a collapsed legend above the hits. */
export function legend() {
  const row = (term, text) => h("div", {}, h("dt", {}, term), h("dd", {}, text));
  return h("details", { class: "legend", id: "legend" },
    h("summary", {}, "What score, confidence and trust mean"),
    h("dl", { class: "facts" },
      row("score", "the rank order of this response (§4.6): compare it between hits of one "
        + "result, not across queries or servers; the per-stage scores show what made it"),
      row("confidence", CONFIDENCE.replace(/^confidence \(§7\.7\.2\): /, "")),
      ...Object.entries(TRUST_LEVELS).map(([level, text]) => row(level, text.replace(`${level}: `, ""))),
      row("injection suspected", INJECTION.replace("injection suspected: ", ""))));
}

function documentLink(hit, citation) {
  const id = hit.chunk?.docId;
  if (!id) return null;
  const state = { view: "document", id, start: citation.start, end: citation.end };
  return h("p", { class: "hit-actions" }, h("a", { href: `/ui${writeState(state)}`, "data-nav": "" }, "Open in document"));
}
