// One run: facts, buttons, charts, iterations, the agent's output as --live prints it, and the run log.
import { ageText, el, iterationText, listen, money, post, tokensText } from "./common.js";
import { spendChart, timelineChart } from "./charts.js";
import { describeIteration, Iterations } from "./iterations.js";

const KEEP_LINES = 2000;
const [, , projectKey, runId] = location.pathname.split("/").map(decodeURIComponent);
const base = `/api/run/${encodeURIComponent(projectKey)}/${encodeURIComponent(runId)}`;
const $ = (id) => document.getElementById(id);
let iterations = new Iterations();
/** Every charted event received, in the run's order: events from before the snapshot arrive after it. */
let charted = [];
let row = null;
document.title = `ralph ${runId}`;
$("run-id").textContent = runId;

function showRow(next) {
  row = next;
  if (!row) return;
  $("state").textContent = row.state;
  $("state").dataset.state = row.state;
  const facts = [
    ["iteration", iterationText(row)],
    ["spend", `${money(row.cost_usd)} (agent CLI's estimate)`],
    ["tokens", tokensText(row.tokens)],
    ["agent", row.agent ?? "-"],
    ["age", ageText(row.started_at)],
    ["reason", row.reason ?? "-"],
    ...(row.branch ? [["branch", row.branch]] : []),
    ...(row.parent ? [["parent run", row.parent]] : []),
  ];
  $("facts").replaceChildren(...facts.map(([name, value]) => el("div", { class: "fact" }, el("span", { class: "name" }, name), el("span", { class: "value", "data-fact": name }, value))));
  for (const button of document.querySelectorAll("button[data-action]")) {
    const action = button.dataset.action;
    const live = row.active;
    button.disabled = action === "continue" ? live || row.mode === "hook" : action === "answer" ? false : !live;
  }
  showQuestion();
}

function showQuestion() {
  const text = iterations.question ?? row?.question ?? null;
  $("question").hidden = !text;
  $("question-text").textContent = text ?? "";
}

function redrawIterations() {
  const list = iterations.list();
  $("timeline").replaceChildren(timelineChart(list, describeIteration));
  $("spend").replaceChildren(spendChart(list));
  $("iterations").replaceChildren(
    ...list.map((it) =>
      el("tr", { "data-iteration": it.iteration, "data-outcome": it.outcome },
        el("td", {}, String(it.iteration)),
        el("td", {}, it.durationMs != null ? `${(it.durationMs / 1000).toFixed(1)}s` : "…"),
        el("td", { class: `outcome-${it.outcome}` }, it.outcome + (it.error ? ` (${it.error})` : "")),
        el("td", {}, it.costUsd != null ? money(it.costUsd) : "-"),
        el("td", {}, it.criteria.map((c) => `${c.name}: ${c.passed ? "pass" : "fail"}`).join(", ") || "-"),
        el("td", {}, Number.isFinite(it.cpuSeconds) ? `${it.cpuSeconds.toFixed(1)}s` : "-"),
        el("td", {}, it.memoryBytes != null ? `${(it.memoryBytes / 1048576).toFixed(0)} MB` : "-"),
      ),
    ),
  );
  showQuestion();
}

/** Appends lines to a pane, keeping it scrolled to the end if it was there. */
function appendLines(pane, nodes) {
  const atEnd = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 4;
  pane.append(...nodes);
  while (pane.childElementCount > KEEP_LINES) pane.firstElementChild.remove();
  if (atEnd) pane.scrollTop = pane.scrollHeight;
}

/** One rendered line: the same toned segments the terminal colours. */
const outputLine = (segments) => el("div", { class: "line" }, ...segments.map((s) => el("span", { class: `tone-${s.tone}` }, s.text)));
const logLine = (text) => el("div", { class: "line" }, text);

listen(`${base}/stream`, {
  snapshot(data) {
    charted = [...data.events];
    iterations = new Iterations();
    charted.forEach((event) => iterations.add(event));
    $("output").replaceChildren();
    $("log").replaceChildren();
    appendLines($("output"), data.output.map(outputLine));
    appendLines($("log"), data.log.map(logLine));
    redrawIterations();
    showRow(data.row);
  },
  append(data) {
    charted.push(...data.events);
    data.events.forEach((event) => iterations.add(event));
    if (data.events.length) redrawIterations();
    appendLines($("output"), data.output.map(outputLine));
  },
  earlier(data) {
    // The snapshot is the end of the run's files; the charted events before it follow once read.
    charted = [...data.events, ...charted];
    iterations = new Iterations();
    charted.forEach((event) => iterations.add(event));
    redrawIterations();
  },
  log(data) {
    appendLines($("log"), data.lines.map(logLine));
  },
  row: showRow,
});

for (const button of document.querySelectorAll("button[data-action]")) {
  button.addEventListener("click", async () => {
    const action = button.dataset.action;
    const body = action === "continue" ? { max_iterations: $("continue-n").value || undefined } : action === "answer" ? { text: $("answer").value } : {};
    $("message").textContent = `${action}…`;
    const result = await post(`${base}/${action}`, body);
    $("message").textContent = result.message;
    $("message").dataset.ok = String(result.ok);
    if (action === "answer" && result.ok) $("answer").value = "";
  });
}

// Ages move on without any event: refresh the facts once a minute (no request is made).
setInterval(() => showRow(row), 60_000);
