// Compare: one query under two configurations side by side (say sparse against hybrid),
// the hits both return marked with their rank in the other list.

import { h, replaceChildren } from "../dom.mjs";
import { advertisedFields } from "../filters.mjs";
import { overlap } from "../compare.mjs";
import { queryTerms } from "../highlight.mjs";
import { retrieveParams } from "../params.mjs";
import { configOf } from "../state.mjs";
import { hitCard } from "./cards.mjs";
import { optionFields, readOptions } from "./options.mjs";

const SIDES = [["a.", "A"], ["b.", "B"]];

export function renderCompare(app, state) {
  const capabilities = app.info.capabilities;
  if (!capabilities.retrieve) return h("p", { class: "notice" }, "This server does not advertise retrieve.");
  const defaults = defaultSides(capabilities, state);
  const results = h("section", { id: "compare-results", "aria-label": "Compared results", "aria-live": "polite" });
  const form = h("form", { id: "compare-form", role: "search", onsubmit: (event) => {
    event.preventDefault();
    const next = { view: "compare", q: form.elements.namedItem("q").value.trim(), filters: [] };
    for (const [prefix] of SIDES) {
      for (const [key, value] of Object.entries(readOptions(form, prefix))) next[prefix + key] = value;
    }
    app.navigate(next);
  } },
    h("div", { class: "query-row" },
      h("label", { for: "q" }, "Query"),
      h("input", { id: "q", name: "q", type: "search", value: state.q || "", autocomplete: "off" }),
      h("button", { type: "submit" }, "Compare")),
    h("div", { class: "sides" }, SIDES.map(([prefix, name]) =>
      h("fieldset", { class: "side" }, h("legend", {}, `Configuration ${name}`), optionFields(capabilities, defaults[prefix], prefix)))),
  );
  if (state.q) runCompare(app, state, defaults, results);
  return h("div", { class: "view-compare" }, form, results);
}

// Without a choice, A is the first advertised mode and B the server's default (or the last).
function defaultSides(capabilities, state) {
  const modes = capabilities.retrieve.modes || [];
  const sides = {};
  for (const [prefix] of SIDES) sides[prefix] = configOf(state, prefix);
  if (!sides["a."].mode && modes.length) sides["a."].mode = modes.includes("sparse") ? "sparse" : modes[0];
  if (!sides["b."].mode && modes.length) sides["b."].mode = modes.includes("hybrid") ? "hybrid" : modes[modes.length - 1];
  return sides;
}

async function runCompare(app, state, sides, results) {
  const capabilities = app.info.capabilities;
  const fields = advertisedFields(capabilities.filter);
  app.busy("Comparing…");
  let pages;
  try {
    pages = await Promise.all(SIDES.map(([prefix]) =>
      app.client.call("retrieve", retrieveParams(state.q, sides[prefix], capabilities, { fields }))));
  } catch (error) {
    app.fail(error);
    return;
  } finally {
    app.busy(null);
  }
  const [left, right] = pages.map((page) => page.hits || []);
  const shared = overlap(left, right);
  const terms = queryTerms(state.q);
  const column = (hits, others, [prefix, name], otherName) =>
    h("section", { class: "column", "aria-label": `Configuration ${name}` },
      h("h2", {}, `${name}: ${describe(sides[prefix])}`),
      h("ol", { class: "hits" }, hits.map((hit, i) => {
        const rank = others[i];
        const badge = rank === null ? { text: `only in ${name}` } : { shared: true, text: `#${rank} in ${otherName}` };
        return h("li", {}, hitCard(hit, i + 1, terms, { compact: true, badge }));
      })));
  replaceChildren(results,
    h("p", { class: "summary", id: "overlap" }, `${shared.shared} shared hits (${Math.round(shared.fraction * 100)}% of the shorter list)`),
    h("div", { class: "columns" }, column(left, shared.left, SIDES[0], "B"), column(right, shared.right, SIDES[1], "A")));
}

function describe(config) {
  const parts = [config.mode || "default mode"];
  if (config.fusion) parts.push(config.fusion);
  if (config.rerank) parts.push(`rerank ${config.rerank}`);
  if (config.mmr !== undefined) parts.push(`MMR ${config.mmr}`);
  if (config.k) parts.push(`k ${config.k}`);
  return parts.join(", ");
}
