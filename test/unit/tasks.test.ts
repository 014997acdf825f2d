import { after, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  describeTask,
  firstIncomplete,
  loadTasks,
  parseTasks,
  type Task,
  type TaskListResult,
} from "../../src/judge/tasks.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-tasks-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function tasksOf(result: TaskListResult): Task[] {
  assert.ok(result.ok, result.ok ? "" : `${result.file}: ${result.message}`);
  return result.tasks;
}

function errorOf(result: TaskListResult): { file: string; message: string } {
  assert.ok(!result.ok, "expected an error value");
  return { file: result.file, message: result.message };
}

const PRD = JSON.stringify({
  project: "shop",
  userStories: [
    { id: "US-001", title: "Set up the schema", priority: 1, passes: true },
    { id: "US-003", title: "Checkout page", priority: 3, passes: false },
    { id: "US-002", title: "Add login form", priority: 2, passes: false },
    { id: "US-004", title: "Order history", priority: 2, passes: false },
  ],
});

test("prd.json: the first incomplete task is the lowest priority number, ties in file order", () => {
  const result = parseTasks(PRD, "prd.json");
  assert.ok(result.ok && result.format === "prd");
  const tasks = tasksOf(result);
  assert.equal(tasks.length, 4);
  assert.deepEqual(tasks[0], { id: "US-001", title: "Set up the schema", done: true, priority: 1 });
  const next = firstIncomplete(tasks);
  assert.equal(next?.id, "US-002");
  assert.equal(describeTask(next!), "US-002: Add login form");
});

test("prd.json: passes:true is skipped, only true counts as done, all done gives null", () => {
  const tasks = tasksOf(
    parseTasks(
      JSON.stringify({
        userStories: [
          { id: "A", title: "a", priority: 1, passes: true },
          { id: "B", title: "b", priority: 2, passes: "true" },
          { id: "C", title: "c", priority: 0, passes: true },
        ],
      }),
      "prd.json",
    ),
  );
  assert.equal(firstIncomplete(tasks)?.id, "B");
  const allDone = tasks.map((task) => ({ ...task, done: true }));
  assert.equal(firstIncomplete(allDone), null);
  assert.equal(firstIncomplete([]), null);
});

test("prd.json: stories without a priority come after prioritised ones", () => {
  const tasks = tasksOf(
    parseTasks(
      JSON.stringify({
        userStories: [
          { id: 7, title: "later" },
          { id: "X", title: "first", priority: 9 },
        ],
      }),
      "x.json",
    ),
  );
  assert.equal(firstIncomplete(tasks)?.id, "X");
  assert.equal(tasks[0]?.id, "7");
});

test("prd.json: malformed files are error values naming the file and the problem", () => {
  const cases: Array<[string, RegExp]> = [
    ['{"userStories": [', /not valid JSON/],
    ["[]", /JSON object/],
    ['{"stories": []}', /no "userStories" list/],
    ['{"userStories": {"id": "A"}}', /no "userStories" list/],
    ['{"userStories": [{"title": "no id"}]}', /userStories\[0\] has no "id"/],
    ['{"userStories": [{"id": "A", "title": "ok"}, {"id": "B"}]}', /userStories\[1\] \(B\) has no "title"/],
    ['{"userStories": [{"id": "A", "title": "t", "priority": "high"}]}', /priority/],
    ['{"userStories": ["US-001"]}', /userStories\[0\] is not an object/],
  ];
  for (const [text, pattern] of cases) {
    const error = errorOf(parseTasks(text, "plans/prd.json"));
    assert.equal(error.file, "plans/prd.json");
    assert.match(error.message, pattern, text);
  }
});

test("prd.json: an empty story list is valid and has nothing left", () => {
  assert.equal(firstIncomplete(tasksOf(parseTasks('{"userStories": []}', "prd.json"))), null);
});

test("checklist: items in file order, CRLF line endings, [x] and [X] done, * and + bullets", () => {
  const text = [
    "# Tasks",
    "",
    "- [x] Write the parser",
    "- [ ] Add CLI flag",
    "* [X] Docs",
    "+ [ ] Release notes",
    "  - [ ] nested item",
    "1. [ ] numbered",
    "- [] not an item",
    "-[ ] not an item",
  ].join("\r\n");
  const result = parseTasks(text, "TASKS.md");
  assert.ok(result.ok && result.format === "checklist");
  const tasks = tasksOf(result);
  assert.deepEqual(
    tasks.map((task) => [task.title, task.done, task.line]),
    [
      ["Write the parser", true, 3],
      ["Add CLI flag", false, 4],
      ["Docs", true, 5],
      ["Release notes", false, 6],
      ["nested item", false, 7],
      ["numbered", false, 8],
    ],
  );
  for (const task of tasks) assert.ok(!task.title.includes("\r"));
  const next = firstIncomplete(tasks);
  assert.equal(next?.title, "Add CLI flag");
  assert.equal(describeTask(next!), "line 4: Add CLI flag");
});

test("checklist: Optional / Future / Nice to have sections are excluded until the next heading of the same or higher level", () => {
  const text = [
    "# Plan",
    "## Must",
    "- [x] one",
    "## Optional",
    "- [ ] optional item",
    "### Details",
    "- [ ] still optional (deeper heading)",
    "## Core, again",
    "- [ ] two",
    "# FUTURE work",
    "- [ ] future item",
    "# Next",
    "- [ ] three",
    "#### *Nice to have:*",
    "- [ ] polish",
    "### Back",
    "- [ ] four",
    "## Nice-to-have",
    "* [ ] shiny",
  ].join("\n");
  const titles = tasksOf(parseTasks(text, "todo.md")).map((task) => task.title);
  assert.deepEqual(titles, ["one", "two", "three", "four"]);
});

test("checklist: a file whose only items are optional has no work left (not an error)", () => {
  const tasks = tasksOf(parseTasks("# Optional\n- [ ] later\n", "todo.md"));
  assert.deepEqual(tasks, []);
  assert.equal(firstIncomplete(tasks), null);
});

test("checklist: items inside fenced code are not tasks", () => {
  const text = "- [ ] real\n```md\n- [ ] example in a fence\n```\n- [x] done";
  assert.deepEqual(
    tasksOf(parseTasks(text, "t.md")).map((task) => task.title),
    ["real", "done"],
  );
});

test("checklist: a file with no checklist items at all is an error value", () => {
  for (const text of ["", "# Tasks\n\nJust prose.\n- a plain list item\n", "```\n- [ ] only in code\n```"]) {
    const error = errorOf(parseTasks(text, "notes/TODO.md"));
    assert.equal(error.file, "notes/TODO.md");
    assert.match(error.message, /no checklist items/);
  }
});

test("format: a file without extension is sniffed from its content", () => {
  assert.equal((parseTasks('{"userStories":[]}', "TASKS") as { format: string }).format, "prd");
  assert.equal((parseTasks("- [ ] a", "TASKS") as { format: string }).format, "checklist");
  assert.equal((parseTasks("\uFEFF- [ ] with BOM", "t.md") as { ok: boolean }).ok, true);
});

test("loadTasks reads files, and unreadable files are error values naming the file", () => {
  const prd = join(dir, "prd.json");
  writeFileSync(prd, PRD);
  assert.equal(firstIncomplete(tasksOf(loadTasks(prd)))?.id, "US-002");

  const missing = join(dir, "missing.md");
  assert.deepEqual(errorOf(loadTasks(missing)), { file: missing, message: "does not exist" });
  assert.match(errorOf(loadTasks(dir)).message, /is a directory/);

  const bad = join(dir, "bad.json");
  writeFileSync(bad, "{ not json");
  const error = errorOf(loadTasks(bad));
  assert.equal(error.file, bad);
  assert.match(error.message, /not valid JSON/);

  if (process.getuid?.() !== 0) {
    const locked = join(dir, "locked.md");
    writeFileSync(locked, "- [ ] a");
    chmodSync(locked, 0o000);
    assert.match(errorOf(loadTasks(locked)).message, /permission denied/);
  }
});
