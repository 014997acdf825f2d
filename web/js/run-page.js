// One run: facts, buttons, charts, iterations (each expandable to its output), child runs, the agent's
// output as --live prints it, and the run log.
import { ageText, el, FOREIGN_TEXT, iterationText, listen, money, post, stateBadge } from "./common.js";
import { spendChart, timelineChart } from "./charts.js";
import { describeIteration, Iterations, mebibytes, reviewText } from "./iterations.js";
import { outputByIteration } from "./iteration-output.js";

const KEEP_LINES = 2000;
const CONFIRM_MS = 5000;
const [, , projectKey, runId] = location.pathname.split("/").map(decodeURIComponent);
const base = `/api/run/${encodeURIComponent(projectKey)}/${encodeURIComponent(runId)}`;
const $ = (id) => document.getElementById(id);
let iterations = new Iterations();
/** Every charted event received, in the run's order: events from before the snapshot arrive after it. */
let charted = [];
let row = null;
let lastAction = null;
const expanded = new Set();
const children = new Map();
/** A --parallel parent's merge of each child, from its events: merged, or abandoned with why. */
const merges = new Map();
document.title = `ralph ${runId}`;
$("run-id").textContent = runId;

/** The spend as the CLI words it (the server words it from ralph's spend ledger). */
function spendText() {
  const text = row.spend_text?.cost ?? "no cost reported";
  return row.agent === "demo" && row.cost_usd !== null ? `${text} (the demo agent's pretend figure)` : text;
}

function showRow(next) {
  row = next;
  if (!row) return;
  $("state").replaceChildren(stateBadge(row.state, row.dry_run === true));
  $("state").dataset.state = row.state;
  const parent = children.size > 0;
  const facts = [
    ["iteration", iterationText(parent && !row.parallel ? { ...row, parallel: children.size } : row)],
    ["spend", spendText()],
    ["tokens", row.spend_text?.tokens ?? "-"],
    ["agent", row.agent ?? "-"],
    ["age", ageText(row.started_at)],
    ["reason", row.reason ?? "-"],
    ...(row.branch ? [["branch", row.branch]] : []),
    ...(row.dry_run ? [["dry run", "no agent was started"]] : []),
    ...(row.state === "foreign" ? [["foreign", FOREIGN_TEXT]] : []),
  ];
  const factNodes = facts.map(([name, value]) =>
    el(
      "div",
      { class: "fact" },
      el("span", { class: "name" }, name),
      el("span", { class: "value", "data-fact": name }, value),
    ),
  );
  if (row.parent)
    factNodes.push(
      el(
        "div",
        { class: "fact" },
        el("span", { class: "name" }, "parent run"),
        el(
          "a",
          {
            class: "value",
            "data-fact": "parent run",
            href: `/run/${encodeURIComponent(projectKey)}/${encodeURIComponent(row.parent)}`,
          },
          row.parent,
        ),
      ),
    );
  $("facts").replaceChildren(...factNodes);
  for (const button of document.querySelectorAll("button[data-action]"))
    button.disabled = !allowed(button.dataset.action);
  // A note about an answer or a button press is about the run as it was: once the run ended it is stale.
  if (!row.active && (lastAction === "answer" || lastAction === "pause" || lastAction === "resume")) {
    $("message").textContent = "";
    lastAction = null;
  }
  showQuestion();
}

/** Which buttons the run's state allows (the server checks again). */
function allowed(action) {
  const live = row.active;
  switch (action) {
    case "pause":
      return row.state === "running";
    case "resume":
      return row.state === "paused";
    case "stop":
    case "stop-now":
      return live;
    case "continue":
      return !live && row.mode !== "hook";
    case "answer":
      return true;
    default:
      return false;
  }
}

function showQuestion() {
  const text = iterations.question ?? row?.question ?? null;
  $("question").hidden = !text;
  $("question-text").textContent = text ?? "";
}

function cell(text, attrs = {}) {
  return el("td", attrs, text);
}

function redrawIterations() {
  const list = iterations.list();
  $("timeline").replaceChildren(timelineChart(list, describeIteration));
  $("spend").replaceChildren(spendChart(list));
  const outputs = outputByIteration([...$("output").children].map((line) => line.textContent ?? ""));
  const rows = [];
  for (const it of list) {
    const open = expanded.has(it.iteration);
    const toggle = el(
      "button",
      {
        type: "button",
        class: "expand",
        "aria-expanded": String(open),
        "aria-label": `output of iteration ${it.iteration}`,
      },
      open ? "▾" : "▸",
    );
    toggle.addEventListener("click", () => {
      if (expanded.has(it.iteration)) expanded.delete(it.iteration);
      else expanded.add(it.iteration);
      redrawIterations();
    });
    rows.push(
      el(
        "tr",
        { "data-iteration": it.iteration, "data-outcome": it.outcome },
        el("td", {}, toggle, ` ${it.iteration}`),
        cell(it.durationMs != null ? `${(it.durationMs / 1000).toFixed(1)}s` : "…", { class: "duration" }),
        el("td", { class: `outcome-${it.outcome}` }, it.outcome + (it.error ? ` (${it.error})` : "")),
        cell(it.costUsd != null ? money(it.costUsd) : "-", { class: "cost" }),
        cell(
          [...it.criteria.map((c) => `${c.name}: ${c.passed ? "pass" : "fail"}`), ...it.reviews.map(reviewText)].join(
            ", ",
          ) || "-",
          it.reviews.length ? { "data-review": it.reviews.at(-1).verdict } : {},
        ),
        cell(Number.isFinite(it.cpuSeconds) ? `${it.cpuSeconds.toFixed(1)}s` : "-", { class: "cpu" }),
        cell(it.memoryBytes != null ? mebibytes(it.memoryBytes) : "-", { class: "memory" }),
      ),
    );
    if (open) {
      const lines = outputs.get(it.iteration) ?? [];
      rows.push(
        el(
          "tr",
          { class: "iteration-output", "data-output-of": it.iteration },
          el(
            "td",
            { colspan: 7 },
            el(
              "pre",
              { class: "output inline" },
              lines.length ? lines.join("\n") : "(no output kept for this iteration)",
            ),
          ),
        ),
      );
    }
  }
  $("iterations").replaceChildren(...rows);
  showQuestion();
}

const badge = (tone, icon, text, title = text) =>
  el(
    "span",
    { class: "badge", "data-tone": tone, title },
    el("span", { class: "icon", "aria-hidden": "true" }, icon),
    ` ${text}`,
  );

/** How far a child's work got: a DONE child whose merge was abandoned never reached the integration branch. */
function mergeOf(child) {
  const merge = merges.get(child.id);
  if (merge?.type === "merge_abandoned")
    return { state: "abandoned", text: `abandoned: ${String(merge.reason ?? "")}` };
  if (merge?.type === "child_merged") return { state: "merged", text: "merged" };
  // A resolve run works on the integration branch itself: it has nothing to merge.
  const resolve = child.id.startsWith(`${runId}-resolve-`);
  return child.state === "DONE" && !resolve
    ? { state: "pending", text: "waiting to merge" }
    : { state: "none", text: resolve ? "(resolves a merge)" : "-" };
}

/** A child's state on its parent's page: its own ending, unless its work was not merged. */
function childState(child, merge) {
  if (merge.state === "abandoned")
    return badge(
      "bad",
      "✗",
      "not merged",
      `${child.state}, but its merge was abandoned: ${merge.text.replace(/^abandoned: /, "")}`,
    );
  return stateBadge(child.state);
}

/** Takes a parent's merge events (a later one for the same child replaces an earlier one). */
function noteMerges(events) {
  let changed = false;
  for (const event of events) {
    if (event.type !== "child_merged" && event.type !== "merge_abandoned") continue;
    merges.set(String(event.child), event);
    changed = true;
  }
  if (changed && children.size > 0) showChildren();
}

function showChildren() {
  const list = [...children.values()].sort((a, b) => (a.started_at ?? "").localeCompare(b.started_at ?? ""));
  $("children").hidden = list.length === 0;
  // A parent runs no agent itself: its children's table replaces its own (empty) charts, iterations and output.
  document.querySelector("main").classList.toggle("parent", list.length > 0);
  $("child-list").replaceChildren(
    ...list.map((child) =>
      el(
        "tr",
        { "data-child": child.id, "data-state": child.state, "data-merge": mergeOf(child).state },
        el(
          "td",
          {},
          el("a", { href: `/run/${encodeURIComponent(projectKey)}/${encodeURIComponent(child.id)}` }, child.id),
        ),
        el("td", { class: "state" }, childState(child, mergeOf(child))),
        cell(mergeOf(child).text, { class: "merge" }),
        cell(iterationText(child)),
        cell(child.spend_text?.cost_cell ?? "-"),
        cell(child.branch ?? "-", { class: "branch" }),
      ),
    ),
  );
  if (row) showRow(row);
}

/** Appends lines to a pane, keeping it scrolled to the end if it was there. */
function appendLines(pane, nodes) {
  const atEnd = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 4;
  pane.append(...nodes);
  while (pane.childElementCount > KEEP_LINES) pane.firstElementChild.remove();
  if (atEnd) pane.scrollTop = pane.scrollHeight;
}

/** One rendered line: the same toned segments the terminal colours. */
const outputLine = (segments) =>
  el("div", { class: "line" }, ...segments.map((s) => el("span", { class: `tone-${s.tone}` }, s.text)));
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
    merges.clear();
    noteMerges(charted);
    showRow(data.row);
  },
  append(data) {
    charted.push(...data.events);
    data.events.forEach((event) => iterations.add(event));
    appendLines($("output"), data.output.map(outputLine));
    if (data.events.length || expanded.size) redrawIterations();
    noteMerges(data.events);
  },
  earlier(data) {
    // The snapshot is the end of the run's files; the charted events before it follow once read.
    charted = [...data.events, ...charted];
    iterations = new Iterations();
    charted.forEach((event) => iterations.add(event));
    redrawIterations();
    noteMerges(data.events);
  },
  log(data) {
    appendLines($("log"), data.lines.map(logLine));
  },
  row: showRow,
});

// A --parallel parent's children come with the project's rows: the ones naming this run as their parent.
listen(
  "/api/runs/stream",
  {
    snapshot({ rows }) {
      children.clear();
      for (const one of rows) if (one.project === projectKey && one.parent === runId) children.set(one.id, one);
      showChildren();
    },
    row(one) {
      if (one.project !== projectKey || one.parent !== runId) return;
      children.set(one.id, one);
      showChildren();
    },
  },
  false,
);

/** When the open Stop now question lapses: only that question's timer, never an earlier, answered one's. */
let confirmTimer = null;

/** Stop now ends the agent at once: the first press asks, a second within 5 s of it does it. */
function confirmed(button) {
  clearTimeout(confirmTimer);
  confirmTimer = null;
  if (button.dataset.confirming === "1") {
    delete button.dataset.confirming;
    button.textContent = "Stop now";
    return true;
  }
  button.dataset.confirming = "1";
  button.textContent = "Really stop now? Press again";
  confirmTimer = setTimeout(() => {
    confirmTimer = null;
    delete button.dataset.confirming;
    button.textContent = "Stop now";
  }, CONFIRM_MS);
  return false;
}

for (const button of document.querySelectorAll("button[data-action]")) {
  button.addEventListener("click", async () => {
    const action = button.dataset.action;
    if (action === "stop-now" && !confirmed(button)) {
      $("message").textContent =
        "the agent is ended at once, its current iteration lost: press Stop now again to confirm";
      return;
    }
    const body =
      action === "continue"
        ? { max_iterations: $("continue-n").value || undefined }
        : action === "answer"
          ? { text: $("answer").value }
          : {};
    lastAction = action;
    $("message").textContent = `${action}…`;
    const result = await post(`${base}/${action}`, body);
    $("message").textContent = result.message;
    $("message").dataset.ok = String(result.ok);
    if (action === "answer" && result.ok) $("answer").value = "";
  });
}

// Ages move on without any event: refresh the facts once a minute (no request is made).
setInterval(() => showRow(row), 60_000);
