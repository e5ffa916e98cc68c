// Compare: two result lists for one query, and which hits they share. Pure functions.

/** A hit's identity across lists: §7.7 keys fusion on the stringified id. */
export function hitKey(hit) {
  return String(hit.id);
}

/**
 * For each list, each hit's rank in the other list (null when only this list has it),
 * plus the shared count and the overlap as a fraction of the shorter list.
 */
export function overlap(left, right) {
  const rankIn = (hits) => new Map(hits.map((hit, rank) => [hitKey(hit), rank + 1]));
  const leftRanks = rankIn(left);
  const rightRanks = rankIn(right);
  const other = (hits, ranks) => hits.map((hit) => ranks.get(hitKey(hit)) ?? null);
  const leftOther = other(left, rightRanks);
  const shared = leftOther.filter((rank) => rank !== null).length;
  const shorter = Math.min(left.length, right.length);
  return {
    left: leftOther,
    right: other(right, leftRanks),
    shared,
    fraction: shorter ? shared / shorter : 0,
  };
}
