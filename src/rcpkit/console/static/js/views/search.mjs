// Search: one query, one configuration, hits as cards, page 2 through the cursor (§10),
// the served indexVersion shown and pinnable (§7.7.1). The state is the URL.

import { h, replaceChildren } from "../dom.mjs";
import { advertisedFields } from "../filters.mjs";
import { queryTerms } from "../highlight.mjs";
import { retrieveParams } from "../params.mjs";
import { configOf, writeState } from "../state.mjs";
import { hitCard } from "./cards.mjs";
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
    h("details", { class: "option-panel", open: hasOptions(state) },
      h("summary", {}, "Options and filters"),
      optionFields(capabilities, configOf(state)),
      filterBuilder(capabilities, state.filters)),
    state.v ? h("div", { class: "field inline" }, h("input", { type: "checkbox", id: "pin", name: "pin", checked: true }), h("label", { for: "pin" }, `keep index version ${state.v} pinned`)) : null,
  );
  if (state.q) runSearch(app, state, results);
  return h("div", { class: "view-search" }, form, results);
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
  replaceChildren(results, summary, list);
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
  append(page.hits || []);
  replaceChildren(summary, summaryLine(page, shown, state));
  if (!shown) summary.append(" — no hits. Try another mode or fewer filters.");
  let cursor = page.nextCursor;
  const more = h("button", { type: "button", id: "next-page", class: "secondary", onclick: async () => {
    more.disabled = true;
    app.busy("Loading the next page…");
    try {
      const next = await app.client.call("retrieve", { ...params, cursor });
      const first = shown + 1;
      append(next.hits || []);
      replaceChildren(summary, summaryLine(next, shown, state));
      cursor = next.nextCursor;
      list.children[first - 1]?.querySelector("article")?.focus();
      if (!cursor) more.remove();
    } catch (error) {
      app.fail(error);
    } finally {
      more.disabled = false;
      app.busy(null);
    }
  } }, "Next page");
  if (cursor) results.append(more);
}

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
  if (page.usage?.notes?.length) pieces.push(h("span", { class: "notes" }, ` · ${page.usage.notes.join("; ")}`));
  return pieces;
}
