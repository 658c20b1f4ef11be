// A response's timeline drawn from its timing record (GET /v1/responses/{id}/timeline): the whole
// request, each model call with its time to first output, output items and MCP calls as bars.

const SVG = "http://www.w3.org/2000/svg";
const ROW = 22;
const LABEL = 170;
const WIDTH = 760;

function svg(tag, attrs, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

/** Bars [{label, start, end, kind, mark}] in seconds from the request's arrival. */
export function bars(timeline) {
  const marks = timeline.marks || [];
  if (marks.length === 0) return { bars: [], total: 0 };
  const origin = marks[0].at;
  const last = marks[marks.length - 1].at;
  const at = (mark) => mark.at - origin;
  const result = [{ label: "request", start: 0, end: last - origin, kind: "request" }];
  const open = new Map();
  let call = null;
  for (const mark of marks) {
    switch (mark.event) {
      case "model.called":
        if (call) call.end = at(mark);
        call = { label: `model ${mark.model || ""}`, start: at(mark), end: last - origin, kind: "model", mark: null };
        result.push(call);
        break;
      case "model.first_output":
        if (call && call.mark === null) call.mark = at(mark);
        break;
      case "output_item.added":
        open.set(`item ${mark.output_index}`, { label: mark.item_type, start: at(mark), end: last - origin, kind: "item" });
        result.push(open.get(`item ${mark.output_index}`));
        break;
      case "output_item.done": {
        const bar = open.get(`item ${mark.output_index}`);
        if (bar) bar.end = at(mark);
        open.delete(`item ${mark.output_index}`);
        break;
      }
      case "mcp.call.started":
      case "file_search.started": {
        const label = mark.event === "file_search.started" ? "file search" : `mcp ${mark.name || ""}`;
        open.set(`call ${mark.item_id}`, { label, start: at(mark), end: last - origin, kind: "tool" });
        result.push(open.get(`call ${mark.item_id}`));
        break;
      }
      case "mcp.call.ended":
      case "file_search.ended": {
        const bar = open.get(`call ${mark.item_id}`);
        if (bar) { bar.end = at(mark); if (mark.error) bar.kind = "tool failed"; }
        break;
      }
      case "response.ended":
        if (call && call.end > at(mark)) call.end = at(mark);
        break;
      default:
        break;
    }
  }
  return { bars: result, total: last - origin };
}

/** The summary figures: time to first output, total, output tokens and their rate. */
export function figures(timeline) {
  const marks = timeline.marks || [];
  const first = marks.find((mark) => mark.event === "model.first_output");
  const ended = marks.find((mark) => mark.event === "response.ended");
  const origin = marks.length ? marks[0].at : 0;
  const output = ended ? ended.output_tokens : null;
  const rate = first && ended && ended.at > first.at && output ? output / (ended.at - first.at) : null;
  return {
    ttft: first ? (first.at - origin) * 1000 : null,
    total: ended ? (ended.at - origin) * 1000 : null,
    output,
    rate,
  };
}

function ms(seconds) {
  return `${Math.round(seconds * 1000)} ms`;
}

export function timelineView(timeline) {
  const { bars: rows, total } = bars(timeline);
  const wrapper = document.createElement("div");
  wrapper.className = "timeline";
  const stats = figures(timeline);
  const summary = document.createElement("p");
  summary.className = "timeline-figures";
  summary.textContent = rows.length === 0 ? "No timing record for this response." : [
    stats.ttft !== null ? `first output ${Math.round(stats.ttft)} ms` : "no output",
    stats.total !== null ? `total ${Math.round(stats.total)} ms` : null,
    stats.output !== null ? `${stats.output} output tokens` : null,
    stats.rate !== null ? `${stats.rate.toFixed(1)} tokens/s` : null,
  ].filter(Boolean).join(" · ");
  wrapper.append(summary);
  if (rows.length === 0) return wrapper;
  const scale = (WIDTH - LABEL - 70) / Math.max(total, 0.001);
  const height = rows.length * ROW + 8;
  const drawing = svg("svg", { viewBox: `0 0 ${WIDTH} ${height}`, width: "100%", role: "img", "aria-label": "timeline" });
  rows.forEach((bar, index) => {
    const y = index * ROW + 4;
    const group = svg("g", { class: `bar ${bar.kind}`, "data-kind": bar.kind });
    group.append(svg("text", { x: 0, y: y + 14, class: "label" }, bar.label));
    const width = Math.max((bar.end - bar.start) * scale, 2);
    group.append(svg("rect", { x: LABEL + bar.start * scale, y, width, height: ROW - 6, rx: 3 }));
    group.append(svg("text", { x: LABEL + bar.start * scale + width + 4, y: y + 14, class: "duration" }, ms(bar.end - bar.start)));
    if (bar.mark !== null && bar.mark !== undefined) {
      group.append(svg("line", { x1: LABEL + bar.mark * scale, x2: LABEL + bar.mark * scale, y1: y - 2, y2: y + ROW - 4, class: "first-output" }));
    }
    const tip = svg("title", {}, `${bar.label}: ${ms(bar.start)} → ${ms(bar.end)}`);
    group.append(tip);
    drawing.append(group);
  });
  wrapper.append(drawing);
  return wrapper;
}
