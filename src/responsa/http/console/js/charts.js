// Line charts drawn as SVG by this page (nothing fetched): one line per series over time buckets.

const PALETTE = ["#3352d6", "#e0245e", "#157f3b", "#a15c07", "#7a5af8", "#0e9384", "#c11574", "#667085"];
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

function short(value) {
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return String(Math.round(value * 10) / 10);
}

/**
 * A chart of `series` ([{name, values}], each value one per bucket of `starts`, null where none),
 * titled `title`, its y axis from 0 to the largest value.
 */
export function lineChart(title, starts, series, label = (start) => new Date(start * 1000).toLocaleTimeString()) {
  const width = 560, height = 200, left = 48, bottom = 22, top = 24, right = 12;
  const values = series.flatMap((line) => line.values.filter((value) => value !== null));
  const most = Math.max(1, ...values);
  const x = (index) => left + (starts.length <= 1 ? 0 : (index * (width - left - right)) / (starts.length - 1));
  const y = (value) => top + (height - top - bottom) * (1 - value / most);
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img", "aria-label": title });
  chart.append(svg("text", { x: left, y: 14, class: "chart-title" }, title));
  for (const share of [0, 0.5, 1]) {
    chart.append(svg("line", { x1: left, x2: width - right, y1: y(most * share), y2: y(most * share), class: "grid" }));
    chart.append(svg("text", { x: left - 6, y: y(most * share) + 4, class: "axis", "text-anchor": "end" }, short(most * share)));
  }
  if (starts.length) {
    chart.append(svg("text", { x: left, y: height - 6, class: "axis" }, label(starts[0])));
    chart.append(svg("text", { x: width - right, y: height - 6, class: "axis", "text-anchor": "end" }, label(starts[starts.length - 1])));
  }
  series.forEach((line, index) => {
    const points = line.values.map((value, at) => (value === null ? null : `${x(at)},${y(value)}`)).filter(Boolean);
    if (!points.length) return;
    const color = PALETTE[index % PALETTE.length];
    chart.append(svg("polyline", { points: points.join(" "), fill: "none", stroke: color, "stroke-width": 2, class: "series", "data-series": line.name }));
    line.values.forEach((value, at) => {  // a mark at each value but nothing: a line of one point draws nothing
      if (value) chart.append(svg("circle", { cx: x(at), cy: y(value), r: 2.5, fill: color, class: "point" }));
    });
  });
  const legend = document.createElement("div");
  legend.className = "legend";
  series.forEach((line, index) => {
    const key = document.createElement("span");
    key.style.setProperty("--swatch", PALETTE[index % PALETTE.length]);
    key.textContent = line.name;
    legend.append(key);
  });
  const box = document.createElement("figure");
  box.className = "chart-box";
  box.append(chart, legend);
  return box;
}
