// Health: who the server is, its conformance level (§14), a ping's round trip, its
// capabilities (§6), and latency histograms from GET /metrics as small SVG charts.

import { capabilityRows } from "../capabilities.mjs";
import { h, replaceChildren, svg } from "../dom.mjs";
import { barChart, formatSeconds, histograms, parseExposition, quantileBound } from "../metrics.mjs";

const WIDTH = 240;
const HEIGHT = 56;
const AXIS = 14; // room for the bucket bounds under the bars

export function renderHealth(app) {
  const info = app.info;
  const ping = h("dd", { id: "ping" }, "…");
  const view = h("div", { class: "view-health" },
    h("h2", {}, "Server"),
    h("dl", { class: "facts" },
      h("div", {}, h("dt", {}, "server"), h("dd", {}, `${info.server?.name ?? "?"} ${info.server?.version ?? ""}`)),
      h("div", {}, h("dt", {}, "protocol"), h("dd", {}, `RCP/${info.protocolVersion}`)),
      h("div", {}, h("dt", {}, "conformance"), h("dd", { id: "conformance" }, info._meta?.conformance ?? "not stated")),
      h("div", {}, h("dt", {}, "endpoint"), h("dd", {}, app.client.base || "/")),
      h("div", {}, h("dt", {}, "ping"), ping)),
    h("h2", {}, "Capabilities"),
    capabilityTable(info.capabilities),
    h("h2", {}, "Latency"));
  const charts = h("div", { class: "charts", id: "charts" });
  view.append(charts);
  measurePing(app, ping);
  loadMetrics(app, charts);
  return view;
}

async function measurePing(app, cell) {
  const began = performance.now();
  try {
    await app.client.call("ping", {});
    cell.textContent = `${(performance.now() - began).toFixed(1)} ms round trip`;
  } catch (error) {
    cell.textContent = error.message;
  }
}

function capabilityTable(capabilities) {
  const offers = (facts) => (facts.length
    ? h("dl", { class: "capability-facts" }, facts.map(([key, value]) => h("div", {}, h("dt", {}, key), h("dd", {}, value))))
    : h("span", { class: "hint" }, "offered"));
  return h("table", { class: "capabilities", id: "capabilities" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "capability"), h("th", { scope: "col" }, "what it offers"))),
    h("tbody", {}, capabilityRows(capabilities).map(({ name, facts }) =>
      h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, offers(facts))))));
}

async function loadMetrics(app, charts) {
  if (!app.config.metrics) {
    replaceChildren(charts, h("p", { class: "notice" }, "This server does not serve /metrics beside its endpoint (start it with --metrics public)."));
    return;
  }
  let samples;
  try {
    samples = parseExposition(await app.client.metrics(app.config.metrics));
  } catch (error) {
    replaceChildren(charts, h("p", { class: "notice" }, `Metrics unavailable: ${error.message}`));
    return;
  }
  const groups = [
    ["Requests by method", histograms(samples, "rcp_request_duration_seconds", "method")],
    ["Retrieve stages", histograms(samples, "rcp_stage_duration_seconds", "stage")],
  ];
  replaceChildren(charts, groups.map(([title, entries]) =>
    h("section", { class: "chart-group" }, h("h3", {}, title),
      entries.length ? entries.map(chart) : h("p", { class: "hint" }, "Nothing measured yet."))));
}

function chart(entry) {
  const bars = barChart(entry.buckets, WIDTH, HEIGHT);
  const p50 = formatSeconds(quantileBound(entry.buckets, 0.5));
  const p95 = formatSeconds(quantileBound(entry.buckets, 0.95));
  const caption = `${entry.label}: ${entry.count} measured, p50 ≤ ${p50}, p95 ≤ ${p95}`;
  const axis = bars.length ? [bars[0], bars[Math.floor(bars.length / 2)], bars[bars.length - 1]] : [];
  const anchors = ["start", "middle", "end"];
  return h("figure", { class: "chart" },
    svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT + AXIS}`, width: String(WIDTH), height: String(HEIGHT + AXIS), role: "img", "aria-label": caption },
      svg("line", { x1: 0, y1: HEIGHT + 0.5, x2: WIDTH, y2: HEIGHT + 0.5, class: "axis" }),
      bars.map((bar) => svg("rect", { x: bar.x, y: bar.y, width: bar.width, height: bar.height, class: "bar" },
        svg("title", {}, `≤ ${formatSeconds(bar.le)}: ${bar.count}`))),
      axis.map((bar, i) => svg("text", {
        x: i === 0 ? 0 : i === 2 ? WIDTH : bar.x + bar.width / 2, y: HEIGHT + AXIS - 2, "text-anchor": anchors[i], class: "tick",
      }, `≤${formatSeconds(bar.le)}`))),
    h("figcaption", {}, caption));
}
