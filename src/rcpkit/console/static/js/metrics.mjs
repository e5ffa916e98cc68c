// Health: Prometheus text exposition (GET /metrics) → latency histograms → small SVG
// bar charts. Pure functions; the view turns the chart description into elements.

/** Samples of the exposition: [{name, labels, value}] (comments and blank lines skipped). */
export function parseExposition(text) {
  const samples = [];
  for (const line of String(text).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/);
    if (!match) continue;
    samples.push({ name: match[1], labels: parseLabels(match[3] || ""), value: Number(match[4]) });
  }
  return samples;
}

function parseLabels(text) {
  const labels = {};
  const pattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (const [, name, value] of text.matchAll(pattern)) {
    labels[name] = value.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return labels;
}

/**
 * The histogram ``name`` split by ``by`` (a label): [{label, buckets, count, sum}],
 * ``buckets`` as [{le, count}] per bucket (not cumulative), ascending ``le``.
 */
export function histograms(samples, name, by) {
  const groups = new Map();
  const group = (label) => {
    if (!groups.has(label)) groups.set(label, { label, cumulative: [], count: 0, sum: 0 });
    return groups.get(label);
  };
  for (const sample of samples) {
    const label = sample.labels[by] ?? "";
    if (sample.name === `${name}_bucket`) {
      const le = sample.labels.le === "+Inf" ? Infinity : Number(sample.labels.le);
      group(label).cumulative.push({ le, count: sample.value });
    } else if (sample.name === `${name}_count`) {
      group(label).count = sample.value;
    } else if (sample.name === `${name}_sum`) {
      group(label).sum = sample.value;
    }
  }
  return [...groups.values()]
    .filter((entry) => entry.count > 0)
    .map(({ label, cumulative, count, sum }) => {
      cumulative.sort((a, b) => a.le - b.le);
      const buckets = cumulative.map((bucket, i) => ({
        le: bucket.le,
        count: bucket.count - (i ? cumulative[i - 1].count : 0),
      }));
      return { label, buckets, count, sum };
    })
    .sort((a, b) => b.count - a.count);
}

/** The upper bound of the bucket holding quantile ``q`` (what a histogram can say). */
export function quantileBound(buckets, q) {
  const total = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  if (!total) return null;
  let seen = 0;
  for (const bucket of buckets) {
    seen += bucket.count;
    if (seen >= q * total) return bucket.le;
  }
  return buckets[buckets.length - 1].le;
}

/** "2.5 ms", "1.2 s", "> 10 s" for a bucket bound in seconds. */
export function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  if (seconds === Infinity) return "> last bucket";
  return seconds < 1 ? `${+(seconds * 1000).toPrecision(3)} ms` : `${+seconds.toPrecision(3)} s`;
}

/**
 * A bar chart of ``buckets`` in a ``width`` × ``height`` box: one bar per bucket, on the
 * same latency axis for every chart (an empty +Inf bucket left out), heights relative
 * to the tallest. [{x, y, width, height, le, count}].
 */
export function barChart(buckets, width, height) {
  const shown = buckets.filter((bucket) => bucket.le !== Infinity || bucket.count > 0);
  if (!shown.some((bucket) => bucket.count > 0)) return [];
  const tallest = Math.max(...shown.map((bucket) => bucket.count));
  const step = width / shown.length;
  return shown.map((bucket, i) => {
    const barHeight = Math.max(bucket.count ? 1 : 0, (bucket.count / tallest) * height);
    return {
      x: +(i * step + 0.5).toFixed(2),
      y: +(height - barHeight).toFixed(2),
      width: +Math.max(1, step - 1).toFixed(2),
      height: +barHeight.toFixed(2),
      le: bucket.le,
      count: bucket.count,
    };
  });
}
