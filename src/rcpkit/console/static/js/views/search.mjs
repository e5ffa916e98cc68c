// Search: one query, one configuration, hits as cards, page 2 through the cursor (§10),
// the served indexVersion shown and pinnable (§7.7.1). The state is the URL.

import { h, replaceChildren } from "../dom.mjs";
import { advertisedFields } from "../filters.mjs";
import { queryTerms } from "../highlight.mjs";
import { retrieveParams } from "../params.mjs";
import { configOf, writeState } from "../state.mjs";
import { hitCard, legend } from "./cards.mjs";
import { EXTENSION, offers } from "./index.mjs";
import { filterBuilder, readFilters } from "./filterbar.mjs";
import { optionFields, readOptions } from "./options.mjs";

export function renderSearch(app, state) {
  const capabilities = app.info.capabilities;
  if (!capabilities.retrieve) {
    return h("p", { class: "notice" }, "This server does not advertise retrieve: there is nothing to search.");
  }
  const results = h("section", { id: "results", "aria-label": "Results", "aria-live": "polite" });
  const form = h("form", { id: "search-form", role: "search", onsubmit: (event) => {
    event.preventDefault();
    const next = { view: "search", q: form.elements.namedItem("q").value.trim(), ...readOptions(form), filters: readFilters(form) };
    if (state.v && form.elements.namedItem("pin")?.checked) next.v = state.v;
    app.navigate(next);
  } },
    h("div", { class: "query-row" },
      h("label", { for: "q" }, "Query"),
      h("input", { id: "q", name: "q", type: "search", value: state.q || "", autocomplete: "off", placeholder: "Type a query, press Enter" }),
      h("button", { type: "submit" }, "Search")),
    perDocument(capabilities, state, () => form),
    h("details", { class: "option-panel", open: hasOptions(state) },
      h("summary", {}, "Options and filters"),
      optionFields(capabilities, configOf(state)),
      filterBuilder(capabilities, state.filters)),
    state.v ? h("div", { class: "field inline" }, h("input", { type: "checkbox", id: "pin", name: "pin", checked: true }), h("label", { for: "pin" }, `keep index version ${state.v} pinned`)) : null,
  );
  if (state.q) runSearch(app, state, results);
  return h("div", { class: "view-search" }, form, results);
}

/** "One hit per document": unit=document (§7.7.2) as a toggle, when the server offers it. */
function perDocument(capabilities, state, form) {
  if (!(capabilities.retrieve.units || []).includes("document")) return null;
  const toggle = h("input", { type: "checkbox", id: "per-document", checked: state.unit === "document", onchange: () => {
    const unit = form().elements.namedItem("unit");
    if (unit) unit.value = toggle.checked ? "document" : "";
    if (state.q) form().requestSubmit();
  } });
  return h("div", { class: "field inline" }, toggle, h("label", { for: "per-document" }, "one hit per document"));
}

function hasOptions(state) {
  return state.filters.length > 0 || ["mode", "fusion", "unit", "rerank", "mmr", "budget"].some((key) => state[key] !== undefined);
}

async function runSearch(app, state, results) {
  const capabilities = app.info.capabilities;
  let params;
  try {
    params = retrieveParams(state.q, configOf(state), capabilities, {
      filters: state.filters, fields: advertisedFields(capabilities.filter), indexVersion: state.v,
    });
  } catch (error) {
    app.fail(error);
    return;
  }
  const terms = queryTerms(state.q);
  const list = h("ol", { class: "hits" });
  const summary = h("p", { class: "summary", id: "summary" });
  const said = h("div", { class: "said" });
  replaceChildren(results, summary, said, legend(), list);
  app.busy("Searching…");
  let page;
  try {
    page = await app.client.call("retrieve", params);
  } catch (error) {
    app.fail(error);
    replaceChildren(results);
    return;
  } finally {
    app.busy(null);
  }
  let shown = 0;
  const documents = offers(capabilities, `${EXTENSION}/document`);
  const append = (hits) => {
    for (const hit of hits) {
      shown += 1;
      list.append(h("li", {}, hitCard(hit, shown, terms, { documents })));
    }
  };
  const report = (answer) => {
    replaceChildren(summary, summaryLine(answer, shown, state));
    replaceChildren(said, notices(answer.usage?.notes));
  };
  append(page.hits || []);
  report(page);
  if (!shown) summary.append(" — no hits. Try another mode or fewer filters.");
  let cursor = page.nextCursor;
  let pages = 1;
  const next = async () => {
    const answer = await app.client.call("retrieve", { ...params, cursor });
    append(answer.hits || []);
    report(answer);
    cursor = answer.nextCursor;
    pages += 1;
  };
  const more = h("button", { type: "button", id: "next-page", class: "secondary", onclick: async () => {
    more.disabled = true;
    app.busy("Loading the next page…");
    try {
      const first = shown + 1;
      await next();
      // The pages shown are part of the state: a reload or a shared link shows them all.
      history.replaceState(null, "", `/ui${writeState({ ...state, pages })}`);
      list.children[first - 1]?.querySelector("article")?.focus();
      if (!cursor) more.remove();
    } catch (error) {
      app.fail(error);
    } finally {
      more.disabled = false;
      app.busy(null);
    }
  } }, "Next page");
  // A URL with pages=N: the first N pages again, each through the previous one's cursor (§10).
  try {
    while (cursor && pages < (state.pages || 1)) await next();
  } catch (error) {
    app.fail(error);
  }
  if (cursor) results.append(more);
}

/** What the engine said of the ranking (usage.notes), the two that change how to read it first. */
function notices(notes) {
  const all = notes || [];
  const nothing = all.find((note) => note.startsWith(NO_QUERY_WORDS));
  const added = all.find((note) => note.startsWith(EXPANDED_WITH));
  const out = [];
  if (nothing) {
    out.push(h("p", { class: "notice warn-notice", id: "no-match" },
      "No chunk contains the query's words: these hits are only the nearest in meaning, and may be unrelated."));
  }
  if (added) {
    const words = added.slice(EXPANDED_WITH.length).split(", ");
    out.push(h("p", { class: "hint", id: "expansion" }, "Terms added by feedback (not typed): ",
      words.flatMap((word, i) => [i ? ", " : "", h("code", {}, word)])));
  }
  return out;
}

// Notes the engine writes (rcpkit.engine.retrieve: recall NO_QUERY_WORDS, prf EXPANDED_WITH).
const NO_QUERY_WORDS = "no chunk contains the query's words";
const EXPANDED_WITH = "feedback added the terms: ";

function summaryLine(page, shown, state) {
  const parts = [`${shown} hit${shown === 1 ? "" : "s"}`];
  const version = page.indexVersion;
  const pieces = [parts.join("")];
  if (version !== undefined) {
    const pinned = { ...state, v: version };
    pieces.push(" · index version ", h("strong", { id: "index-version" }, String(version)));
    if (String(state.v) !== String(version)) {
      pieces.push(" (", h("a", { href: `/ui${writeState(pinned)}`, "data-nav": "" }, "pin it in the URL"), ")");
    } else {
      pieces.push(" (pinned)");
    }
  }
  if (typeof page.usage?.latencyMs === "number") pieces.push(` · ${page.usage.latencyMs.toFixed(1)} ms`);
  const notes = (page.usage?.notes || []).filter((note) => !note.startsWith(NO_QUERY_WORDS) && !note.startsWith(EXPANDED_WITH));
  if (notes.length) pieces.push(h("span", { class: "notes" }, ` · ${notes.join("; ")}`));
  return pieces;
}
