// The terminal UI's runs list: filters by state, sorts by age or spend, folds a --parallel parent's children.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { RunRow } from "../../src/ui/run-row.js";
import { listRuns, runLine, type ListedRun, type RunFilter, type RunSort } from "../../src/tui/runs-view.js";

function row(id: string, fields: Partial<RunRow>): RunRow {
  return {
    id,
    project: "p",
    state: "MAX_ITERATIONS",
    active: false,
    mode: "run",
    agent: "command",
    iteration: 1,
    max_iterations: 1,
    cost_usd: 0,
    started_at: "2026-12-01T00:00:00.000Z",
    updated_at: null,
    ended_at: null,
    age_seconds: null,
    pid: null,
    branch: null,
    parent: null,
    question: null,
    dry_run: false,
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0, total: 0 },
    cost_source: "reported",
    calls: 1,
    spend_text: { cost: "", cost_cell: "", tokens: "", tokens_cell: "" },
    reason: null,
    task: null,
    parallel: null,
    ...fields,
  };
}

const rows = [
  row("old-dear", { started_at: "2026-12-01T00:00:00.000Z", cost_usd: 3 }),
  row("mid-cheap", { started_at: "2026-12-01T01:00:00.000Z", cost_usd: 0.1, state: "running", active: true }),
  row("new-asks", {
    started_at: "2026-12-01T02:00:00.000Z",
    cost_usd: 1,
    state: "needs_human",
    active: true,
    question: "Which?",
  }),
  row("par", { started_at: "2026-12-01T00:30:00.000Z", cost_usd: 0 }),
  row("par-2", { started_at: "2026-12-01T00:32:00.000Z", parent: "par", state: "running", active: true }),
  row("par-1", { started_at: "2026-12-01T00:31:00.000Z", parent: "par" }),
];
const ids = (filter: RunFilter, sort: RunSort, folded: string[] = []) =>
  listRuns(rows, filter, sort, new Set(folded)).map((item) => (item.child ? `  ${item.row.id}` : item.row.id));

test("newest first by age, highest spend first by spend; children under their parent, oldest first", () => {
  assert.deepEqual(ids("all", "age"), ["new-asks", "mid-cheap", "par", "  par-1", "  par-2", "old-dear"]);
  assert.deepEqual(ids("all", "spend"), ["old-dear", "new-asks", "mid-cheap", "par", "  par-1", "  par-2"]);
});

test("filters by state; a parent stays listed when one of its children passes, with only the children that pass", () => {
  assert.deepEqual(ids("active", "age"), ["new-asks", "mid-cheap", "par", "  par-2"]);
  assert.deepEqual(ids("asking", "age"), ["new-asks"]);
  assert.deepEqual(ids("ended", "age"), ["par", "  par-1", "old-dear"]);
});

test("an ended --parallel family is not active; a live one lists its live children and counts the ended ones", () => {
  const family = (state: RunRow["state"], active: boolean, kids: Array<[RunRow["state"], boolean]>) => [
    row("fam", { state, active, parallel: 2 }),
    ...kids.map(([kidState, kidActive], i) =>
      row(`fam-${i + 1}`, {
        parent: "fam",
        state: kidState,
        active: kidActive,
        started_at: `2026-12-01T00:0${i + 1}:00.000Z`,
      }),
    ),
  ];
  const listed = (rows: RunRow[], filter: RunFilter) =>
    listRuns(rows, filter, "age", new Set()).map((item) => [
      item.child ? `  ${item.row.id}` : item.row.id,
      item.children,
      item.filtered,
    ]);
  const ended = family("DONE", false, [
    ["DONE", false],
    ["FAILED", false],
    ["STOPPED", false],
  ]);
  assert.deepEqual(listed(ended, "active"), []);
  assert.deepEqual(listed(ended, "ended"), [
    ["fam", 3, 0],
    ["  fam-1", 0, 0],
    ["  fam-2", 0, 0],
    ["  fam-3", 0, 0],
  ]);
  const live = family("running", true, [
    ["DONE", false],
    ["running", true],
    ["FAILED", false],
  ]);
  assert.deepEqual(listed(live, "active"), [
    ["fam", 1, 2],
    ["  fam-2", 0, 0],
  ]);
  const line = runLine(
    listRuns(live, "active", "age", new Set())[0] as ListedRun,
    false,
    160,
    Date.parse("2026-12-01T01:00:00.000Z"),
  )
    .map((part) => part.text)
    .join("");
  assert.match(line, /fam \(2 ended\)/);
  // Every child ended while the parent still merges: the parent alone, its children counted, nothing to fold.
  const merging = family("running", true, [
    ["DONE", false],
    ["DONE", false],
  ]);
  assert.deepEqual(listed(merging, "active"), [["fam", 0, 2]]);
  assert.equal(listRuns(merging, "active", "age", new Set(["p/fam"]))[0]?.folded, false);
});

test("a folded parent hides its children and counts them", () => {
  const listed = listRuns(rows, "all", "age", new Set(["p/par"]));
  assert.deepEqual(
    listed.map((item) => [item.row.id, item.children, item.folded]),
    [
      ["new-asks", 0, false],
      ["mid-cheap", 0, false],
      ["par", 2, true],
      ["old-dear", 0, false],
    ],
  );
});
