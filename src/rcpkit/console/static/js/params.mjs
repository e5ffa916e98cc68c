// From the console's state to retrieve params (§7.7), within the advertised capability
// (§6.1): an option the server does not offer is left out rather than sent to fail.

import { filterTree } from "./filters.mjs";

export const DEFAULT_K = 10;

/** retrieve params for ``query`` with one configuration; throws on a bad filter row. */
export function retrieveParams(query, config, capabilities, { filters = [], fields = [], indexVersion } = {}) {
  const retrieve = capabilities?.retrieve || {};
  const params = { query, k: clampK(config.k, retrieve.maxK) };
  const modes = retrieve.modes || [];
  if (config.mode && modes.includes(config.mode)) params.mode = config.mode;
  const hybrid = (params.mode || retrieve.defaultMode) === "hybrid";
  if (config.fusion && hybrid && (retrieve.fusion || []).includes(config.fusion)) {
    params.fusion = { method: config.fusion };
  }
  if (config.unit && (retrieve.units || []).includes(config.unit)) params.unit = config.unit;
  const rerankMethods = capabilities?.rerank?.methods || [];
  if (config.rerank && retrieve.rerankBuiltin && rerankMethods.includes(config.rerank)) {
    params.rerank = { method: config.rerank };
  }
  if (config.mmr !== undefined && retrieve.mmr) {
    params.mmr = { lambda: Math.min(1, Math.max(0, Number(config.mmr))) };
  }
  if (config.budget && retrieve.tokenBudget) params.tokenBudget = Math.max(1, Math.round(config.budget));
  const filter = filterTree(filters, fields);
  if (filter && capabilities?.filter) params.filter = filter;
  if (indexVersion && retrieve.snapshots) params.indexVersion = String(indexVersion);
  return params;
}

export function clampK(k, maxK) {
  const wanted = Number.isInteger(k) && k > 0 ? k : DEFAULT_K;
  return maxK ? Math.min(wanted, maxK) : wanted;
}
