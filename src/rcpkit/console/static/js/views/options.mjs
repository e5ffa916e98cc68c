// The retrieve options of one configuration, as form fields built from the advertised
// capability (§6.1): only modes, fusions, units and rerankers the server offers.

import { h, input, select } from "../dom.mjs";
import { DEFAULT_K } from "../params.mjs";

export function optionFields(capabilities, config, prefix = "") {
  const retrieve = capabilities?.retrieve || {};
  const id = (name) => `${prefix.replace(".", "-")}${name}`;
  const fields = [];
  const modes = retrieve.modes || [];
  if (modes.length) {
    const label = retrieve.defaultMode ? `server default (${retrieve.defaultMode})` : "server default";
    fields.push(select(id("mode"), "Mode", [["", label], ...modes], config.mode));
  }
  if ((retrieve.fusion || []).length) {
    fields.push(select(id("fusion"), "Fusion (hybrid)", [["", "server default"], ...retrieve.fusion], config.fusion));
  }
  fields.push(input(id("k"), "k", { type: "number", min: "1", max: retrieve.maxK ? String(retrieve.maxK) : undefined, value: String(config.k ?? DEFAULT_K), inputmode: "numeric" }));
  if ((retrieve.units || []).length) {
    fields.push(select(id("unit"), "Unit", [["", "server default"], ...retrieve.units], config.unit));
  }
  const rerank = capabilities?.rerank?.methods || [];
  if (retrieve.rerankBuiltin && rerank.length) {
    fields.push(select(id("rerank"), "Rerank", [["", "none"], ...rerank], config.rerank));
  }
  if (retrieve.mmr) {
    fields.push(input(id("mmr"), "MMR λ (blank: off)", { type: "number", min: "0", max: "1", step: "0.1", value: config.mmr ?? "", placeholder: "off" }));
  }
  if (retrieve.tokenBudget) {
    fields.push(input(id("budget"), "Token budget", { type: "number", min: "1", value: config.budget ?? "", placeholder: "none" }));
  }
  return h("div", { class: "options" }, fields);
}

/** The configuration the option fields of ``form`` hold now. */
export function readOptions(form, prefix = "") {
  const config = {};
  const value = (name) => form.elements.namedItem(`${prefix.replace(".", "-")}${name}`)?.value?.trim() ?? "";
  for (const name of ["mode", "fusion", "unit", "rerank"]) {
    if (value(name)) config[name] = value(name);
  }
  for (const name of ["k", "mmr", "budget"]) {
    const text = value(name);
    if (text !== "" && Number.isFinite(Number(text))) config[name] = Number(text);
  }
  return config;
}
