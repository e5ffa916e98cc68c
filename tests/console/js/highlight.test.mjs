import assert from "node:assert/strict";
import { test } from "node:test";

import { citedSegments, documentSegments, queryTerms, termSegments } from "../../../src/rcpkit/console/static/js/highlight.mjs";

test("a hit whose span is its whole text is cited whole, a document hit as a chunk hit", () => {
  assert.deepEqual(citedSegments("abcdef", { start: 10, end: 16 }), [{ text: "abcdef", cited: true }]);
  const logbook = "Entry 0.\n\nEntry 1.\n";
  assert.deepEqual(citedSegments(logbook, { start: 0, end: logbook.length }), [{ text: logbook, cited: true }]);
});

test("a span that cannot be placed in the text marks nothing", () => {
  assert.deepEqual(citedSegments("best\n\nnext", { start: 40, end: 44 }), [{ text: "best\n\nnext", cited: false }]);
  assert.deepEqual(citedSegments("window text", { start: 3, end: 5 }), [{ text: "window text", cited: false }]);
  assert.deepEqual(citedSegments("no span", {}), [{ text: "no span", cited: false }]);
});

test("query terms are marked as whole words, in any case", () => {
  const terms = queryTerms("Rank a FUSION rank");
  assert.deepEqual(terms, ["fusion", "rank"]);
  const marked = termSegments("Rank lists, ranked, reranked; fusion.", terms).filter((part) => part.term).map((part) => part.text);
  assert.deepEqual(marked, ["Rank", "fusion"]);
});

test("a term is not marked inside a longer word (issue 52: \"how\" in \"however\")", () => {
  const marked = termSegments("However it goes, this is how.", ["how"]).filter((part) => part.term).map((part) => part.text);
  assert.deepEqual(marked, ["how"]);
});

test("stopwords of the query are not marked: the engine does not match them", () => {
  assert.deepEqual(queryTerms("how to set the timeout of a test"), ["timeout", "test", "set"]);
});

test("the document view marks chunk starts and the cited span, paged text included", () => {
  const chunks = [{ index: 0, start: 0, end: 6 }, { index: 1, start: 4, end: 10 }];
  assert.deepEqual(documentSegments("0123456789", 0, chunks, { start: 4, end: 6 }), [
    { boundary: 0 }, { text: "0123", cited: false }, { boundary: 1 }, { text: "45", cited: true }, { text: "6789", cited: false },
  ]);
  // The text starts at offset 5, inside the cited span [4, 6).
  assert.deepEqual(documentSegments("56789", 5, chunks, { start: 4, end: 6 }), [
    { text: "5", cited: true }, { text: "6789", cited: false },
  ]);
});
