// SVG charts of a run's iterations: a timeline (bar height = duration, colour = outcome) and cumulative spend.
import { money } from "./common.js";
const NS = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 160;
const PAD = { left: 44, right: 8, top: 8, bottom: 20 };

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  node.append(...children);
  return node;
}

function frame(label) {
  return svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": label, class: "chart-svg" });
}

function axis(root, max, format) {
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  for (const fraction of [0, 0.5, 1]) {
    const y = PAD.top + plotHeight * (1 - fraction);
    root.append(svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y, y2: y, class: "grid" }));
    root.append(
      svg("text", { x: PAD.left - 4, y: y + 4, class: "tick", "text-anchor": "end" }, format(max * fraction)),
    );
  }
}

/** What a chart with nothing to draw shows instead of axes of zeros. */
function emptyState(text) {
  const node = document.createElement("p");
  node.className = "chart-empty";
  node.textContent = text;
  return node;
}

/** The timeline: one bar per iteration; its tooltip lists duration, outcome, cost, criteria, CPU and memory. */
export function timelineChart(iterations, describe) {
  if (!iterations.some((it) => typeof it.durationMs === "number")) return emptyState("no finished iteration yet");
  const root = frame("iteration timeline");
  // At least a second high: iterations of 0 s show as short bars on a 0–1 s scale, not full ones on a 0–1 ms one.
  const max = Math.max(1000, ...iterations.map((it) => it.durationMs ?? 0));
  axis(root, max, (ms) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`);
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = plotWidth / Math.max(iterations.length, 1);
  iterations.forEach((it, index) => {
    const height = Math.max(2, ((it.durationMs ?? 0) / max) * plotHeight);
    const x = PAD.left + index * step + step * 0.1;
    const bar = svg("rect", {
      x,
      y: PAD.top + plotHeight - height,
      width: Math.max(1, step * 0.8),
      height,
      class: `bar outcome-${it.outcome ?? "running"}`,
      "data-iteration": it.iteration,
      ...(it.reviews?.length ? { "data-review": it.reviews.at(-1).verdict } : {}),
    });
    bar.append(svg("title", {}, describe(it)));
    root.append(bar);
    if (iterations.length <= 40)
      root.append(
        svg("text", { x: x + step * 0.4, y: HEIGHT - 6, class: "tick", "text-anchor": "middle" }, String(it.iteration)),
      );
  });
  return root;
}

/** Cumulative spend after each iteration, as a line with a point per iteration. */
export function spendChart(iterations) {
  const points = iterations.filter((it) => typeof it.totalUsd === "number" && it.totalUsd > 0);
  if (points.length === 0)
    return emptyState("no spend reported: this agent reports no cost, or nothing has been spent yet");
  const root = frame("cumulative spend");
  const max = Math.max(0.0001, ...points.map((it) => it.totalUsd));
  axis(root, max, (usd) => `$${usd.toFixed(usd < 1 ? 3 : 2)}`);
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const xOf = (index) => PAD.left + (points.length <= 1 ? plotWidth / 2 : (index / (points.length - 1)) * plotWidth);
  const yOf = (usd) => PAD.top + plotHeight * (1 - usd / max);
  root.append(
    svg("polyline", { points: points.map((it, i) => `${xOf(i)},${yOf(it.totalUsd)}`).join(" "), class: "spend-line" }),
  );
  points.forEach((it, i) => {
    const dot = svg("circle", { cx: xOf(i), cy: yOf(it.totalUsd), r: 3, class: "spend-dot" });
    dot.append(svg("title", {}, `iteration ${it.iteration}: ${money(it.totalUsd)} so far`));
    root.append(dot);
  });
  return root;
}

/** The project's spend by day (`ralph spend`): one bar per day, its height the cost (tokens where no cost is known). */
export function spendByDayChart(data) {
  const groups = data.groups ?? [];
  if (groups.length === 0) return emptyState("nothing spent in this period (ralph spend)");
  const byCost = groups.some((group) => typeof group.cost_usd === "number" && group.cost_usd > 0);
  const value = (group) => (byCost ? (group.cost_usd ?? 0) : group.tokens.total);
  const root = frame(byCost ? "spend by day" : "tokens by day");
  const max = Math.max(byCost ? 0.0001 : 1, ...groups.map(value));
  axis(root, max, byCost ? (usd) => `$${usd.toFixed(usd < 1 ? 3 : 2)}` : (n) => String(Math.round(n)));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = plotWidth / groups.length;
  groups.forEach((group, index) => {
    const height = Math.max(1, (value(group) / max) * plotHeight);
    const x = PAD.left + index * step + step * 0.1;
    const bar = svg("rect", {
      x,
      y: PAD.top + plotHeight - height,
      width: Math.max(1, step * 0.8),
      height,
      class: "bar spend-day",
      "data-day": group.key,
    });
    // The words are the CLI's, from the server: the same figures as ralph spend prints.
    bar.append(
      svg("title", {}, `${group.key}: ${group.cost_text} · ${group.calls} call(s) · tokens ${group.tokens_text}`),
    );
    root.append(bar);
    if (groups.length <= 31)
      root.append(
        svg("text", { x: x + step * 0.4, y: HEIGHT - 6, class: "tick", "text-anchor": "middle" }, group.key.slice(5)),
      );
  });
  return root;
}
