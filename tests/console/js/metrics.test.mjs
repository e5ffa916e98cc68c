import assert from "node:assert/strict";
import { test } from "node:test";

import { overlap } from "../../../src/rcpkit/console/static/js/compare.mjs";
import { barChart, formatSeconds, histograms, parseExposition, quantileBound } from "../../../src/rcpkit/console/static/js/metrics.mjs";

const EXPOSITION = `# HELP rcp_request_duration_seconds time
# TYPE rcp_request_duration_seconds histogram
rcp_request_duration_seconds_bucket{le="0.001",method="retrieve"} 1.0
rcp_request_duration_seconds_bucket{le="0.01",method="retrieve"} 4.0
rcp_request_duration_seconds_bucket{le="+Inf",method="retrieve"} 5.0
rcp_request_duration_seconds_count{method="retrieve"} 5.0
rcp_request_duration_seconds_sum{method="retrieve"} 0.2
rcp_request_duration_seconds_bucket{le="0.001",method="ping"} 0.0
rcp_request_duration_seconds_bucket{le="+Inf",method="ping"} 0.0
rcp_request_duration_seconds_count{method="ping"} 0.0
`;

test("a histogram is read per label, bucket counts made non-cumulative", () => {
  const [retrieve, ...rest] = histograms(parseExposition(EXPOSITION), "rcp_request_duration_seconds", "method");
  assert.equal(rest.length, 0); // nothing measured for ping
  assert.equal(retrieve.label, "retrieve");
  assert.deepEqual(retrieve.buckets.map((bucket) => bucket.count), [1, 3, 1]);
  assert.equal(quantileBound(retrieve.buckets, 0.5), 0.01);
  assert.equal(quantileBound(retrieve.buckets, 0.99), Infinity);
  assert.equal(formatSeconds(0.0025), "2.5 ms");
});

test("bars share one axis, the tallest bucket full height, an empty +Inf left out", () => {
  const buckets = [{ le: 1, count: 0 }, { le: 2, count: 2 }, { le: 3, count: 4 }, { le: Infinity, count: 0 }];
  const bars = barChart(buckets, 90, 50);
  assert.deepEqual(bars.map((bar) => bar.height), [0, 25, 50]);
  assert.deepEqual(bars.map((bar) => bar.x), [0.5, 30.5, 60.5]);
  assert.equal(bars[2].y, 0);
  assert.deepEqual(barChart([{ le: 1, count: 0 }], 90, 50), []);
});

test("compare marks each shared hit with its rank in the other list", () => {
  const result = overlap([{ id: "a" }, { id: 2 }, { id: "c" }], [{ id: "2" }, { id: "x" }]);
  assert.deepEqual(result.left, [null, 1, null]);
  assert.deepEqual(result.right, [2, null]);
  assert.equal(result.shared, 1);
  assert.equal(result.fraction, 0.5);
});

test("scores keep their digits, and a tiny one does not read as zero", async () => {
  const { number } = await import("../../../src/rcpkit/console/static/js/dom.mjs");
  assert.equal(number(0.83456), "0.835");
  assert.equal(number(0), "0.000");
  assert.equal(number(1.3186e-6), "1.3e-6");
  assert.equal(number(undefined), "–");
});
