// What a hit card highlights: the cited span (§7.7 Hit.citation) inside the hit's text,
// and the query's words inside that. Pure functions returning segments to render.

// The engine's English stopwords (rcpkit.engine.text.analysis `_STOPWORDS`; a test keeps
// the two equal): its lexical arm never matches them, so marking them would show a match
// that did not count.
export const STOPWORDS = new Set((
  "a an and are as at be but by for if in into is it no not of on or such that the their " +
  "then there these they this to was will with what which who whom how why when where " +
  "does do did can could would should has have had been being i you we he she its our"
).split(" "));

/** The query's distinct words (two letters or more, no stopwords), lower-cased, longest first. */
export function queryTerms(query) {
  const words = String(query || "").toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) || [];
  return [...new Set(words)].filter((word) => !STOPWORDS.has(word)).sort((a, b) => b.length - a.length);
}

/**
 * The hit's text as [{text, cited}] segments. A citation's start/end index the
 * document, not the hit: when the span is as long as the text, the text is the cited
 * span itself (a chunk, or a `document`/`page` unit, which is its document's own text
 * cited by the span it covers). Otherwise the span cannot be placed in the text, and
 * nothing is marked cited.
 */
export function citedSegments(text, citation) {
  const body = String(text ?? "");
  const start = citation?.start;
  const end = citation?.end;
  if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start || !body) {
    return [{ text: body, cited: false }];
  }
  return [{ text: body, cited: end - start >= body.length }];
}

/** ``text`` as [{text, term}] segments, each whole-word occurrence of a term (any case) marked. */
export function termSegments(text, terms) {
  if (!terms.length || !text) return [{ text, term: false }];
  // Whole words only: "how" is not a match inside "however", nor "rank" inside "ranked".
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${terms.map(escape).join("|")})(?![\\p{L}\\p{N}])`, "giu");
  const parts = text.split(pattern);
  // split() with one capture group alternates text, term, text, ...
  return parts.map((part, i) => ({ text: part, term: i % 2 === 1 })).filter((part) => part.text !== "");
}

function escape(word) {
  return word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The document view's text as segments: chunk boundaries (``boundary``: the chunk's
 * index) where a chunk starts, and the cited span [cited.start, cited.end) marked.
 * ``offset`` is where ``text`` starts in the document (a long document is paged).
 */
export function documentSegments(text, offset, chunks, cited) {
  const cuts = new Map();
  const mark = (at, what) => {
    const local = at - offset;
    if (local < 0 || local > text.length) return;
    if (!cuts.has(local)) cuts.set(local, []);
    cuts.get(local).push(what);
  };
  for (const chunk of chunks) mark(chunk.start, { boundary: chunk.index });
  const hasCited = cited && Number.isInteger(cited.start) && Number.isInteger(cited.end) && cited.end > cited.start;
  if (hasCited) {
    mark(Math.max(cited.start, offset), { open: true });
    mark(Math.min(cited.end, offset + text.length), { close: true });
  }
  const positions = [...cuts.keys()].sort((a, b) => a - b);
  const segments = [];
  let inside = hasCited && cited.start < offset && cited.end > offset;
  let from = 0;
  for (const at of positions) {
    if (at > from) segments.push({ text: text.slice(from, at), cited: inside });
    for (const what of cuts.get(at)) {
      if (what.boundary !== undefined) segments.push({ boundary: what.boundary });
      if (what.open) inside = true;
      if (what.close) inside = false;
    }
    from = at;
  }
  if (from < text.length) segments.push({ text: text.slice(from), cited: inside });
  return segments;
}
