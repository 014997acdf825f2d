// `ralph report`: a parent run's report, built from a fixed record, against golden Markdown and JSON files,
// the JSON valid against schemas/report.schema.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { Ajv2020 } from "ajv/dist/2020.js";
import { buildReport, type RunRecordRead } from "../../src/report/build-report.js";
import { runReportSchema } from "../../src/report/report-schema.js";
import { renderReportMarkdown } from "../../src/cli/render-report.js";
import type { RunEvent } from "../../src/store/event-log.js";
import type { RunStatus } from "../../src/store/status-file.js";

const golden = (name: string) => new URL(`../../../test/golden/${name}`, import.meta.url);

let clock = Date.parse("2026-03-01T10:00:00.000Z");
function events(run: string, bodies: Array<Record<string, unknown>>): RunEvent[] {
  return bodies.map((body) => ({ v: 1, ts: new Date((clock += 1000)).toISOString(), run, ...body }) as RunEvent);
}

function status(run: string, fields: Partial<RunStatus>): RunStatus {
  return {
    schema_version: 1,
    run_id: run,
    mode: "run",
    pid: 1,
    pid_start: null,
    hostname: "host",
    cwd: "/project",
    agent: "claude",
    state: "ended",
    iteration: 1,
    max_iterations: 3,
    calls: 1,
    cost_usd: 0,
    tokens: { input: 0, output: 0 },
    session_id: null,
    current_task: null,
    started_at: "2026-03-01T10:00:00.000Z",
    updated_at: "2026-03-01T10:05:00.000Z",
    ended_at: "2026-03-01T10:05:00.000Z",
    exit_reason: "DONE",
    exit_code: 0,
    last_action: "all criteria passed",
    ...fields,
  };
}

const BASE = "0123456789abcdef0123456789abcdef01234567";
const parent: RunRecordRead = {
  id: "p",
  status: status("p", {
    exit_reason: "FAILED",
    exit_code: 1,
    cost_usd: 0.75,
    branch: "ralph/p",
    worktree: "/project/.ralph/worktrees/p",
    parallel: 2,
    iteration: 3,
    last_action: "ending",
  }),
  events: events("p", [
    {
      type: "run_started",
      agent: "claude",
      max_iterations: 3,
      cwd: "/project",
      parallel: 2,
      branch: "ralph/p",
      worktree: "/project/.ralph/worktrees/p",
      base: BASE,
      base_branch: "main",
    },
    { type: "child_started", child: "p-1", task: "US-1", branch: "ralph/p-1" },
    { type: "child_started", child: "p-2", task: "US-2", branch: "ralph/p-2" },
    {
      type: "child_ended",
      child: "p-1",
      task: "US-1",
      reason: "DONE",
      exit_code: 0,
      detail: "task US-1: login is marked done in prd.json",
      cost_usd: 0.25,
    },
    {
      type: "child_merged",
      child: "p-1",
      task: "US-1",
      commit: "1111111111111111111111111111111111111111",
      resolves: 0,
    },
    { type: "child_started", child: "p-3", task: "US-3", branch: "ralph/p-3" },
    {
      type: "child_ended",
      child: "p-2",
      task: "US-2",
      reason: "DONE",
      exit_code: 0,
      detail: "task US-2: logout is marked done in prd.json",
      cost_usd: 0.2,
    },
    {
      type: "resolve_started",
      child: "p-resolve-1",
      for_child: "p-2",
      task: "US-2",
      attempt: 1,
      conflicts: ["src/app.ts"],
      checks_failed: false,
    },
    { type: "resolve_ended", child: "p-resolve-1", for_child: "p-2", reason: "MAX_ITERATIONS", cost_usd: 0.1 },
    {
      type: "merge_abandoned",
      child: "p-2",
      task: "US-2",
      reason: "conflicts in src/app.ts, still after 1 resolve iteration(s)",
      resolves: 1,
    },
    {
      type: "run_ended",
      reason: "FAILED",
      exit_code: 1,
      detail:
        "1 task(s) left pending: merge of ralph/p-2 abandoned: conflicts in src/app.ts, still after 1 resolve iteration(s)",
    },
  ]),
};
const child = (
  id: string,
  task: string,
  extra: Array<Record<string, unknown>>,
  fields: Partial<RunStatus> = {},
): RunRecordRead => ({
  id,
  status: status(id, { parent: "p", branch: `ralph/${id}`, ...fields }),
  events: events(id, [{ type: "iteration_started", iteration: 1, task }, ...extra]),
});
const children = [
  child("p-1", "US-1: login", [
    { type: "criteria_checked", iteration: 1, criterion: "command", check: "npm test", passed: true, detail: "exit 0" },
    {
      type: "criteria_checked",
      iteration: 1,
      criterion: "review",
      check: "the login form validates input",
      passed: true,
      detail: "approved",
    },
    {
      type: "iteration_ended",
      iteration: 1,
      result: "done",
      duration_ms: 61200,
      cost_usd: 0.25,
      commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    },
  ]),
  child("p-2", "US-2: logout", [
    {
      type: "iteration_ended",
      iteration: 1,
      result: "continue",
      duration_ms: 30000,
      cost_usd: 0.1,
      commit: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    },
    { type: "iteration_started", iteration: 2, task: "US-2: logout" },
    { type: "criteria_checked", iteration: 2, criterion: "command", check: "npm test", passed: true, detail: "exit 0" },
    { type: "iteration_ended", iteration: 2, result: "done", duration_ms: 12500, cost_usd: 0.1, commit: null },
  ]),
  child(
    "p-3",
    "US-3: settings | page",
    [{ type: "iteration_ended", iteration: 1, result: "asked", duration_ms: 8000, cost_usd: 0.1, commit: null }],
    {
      state: "needs_human",
      last_action: "waiting for an answer",
      cost_usd: 0.1,
      question: "Which settings\nmatter?",
      answer: null,
      exit_reason: null,
      exit_code: null,
      ended_at: null,
    },
  ),
  child(
    "p-resolve-1",
    "none",
    [
      {
        type: "iteration_ended",
        iteration: 1,
        result: "max_iterations",
        duration_ms: 4000,
        cost_usd: 0.1,
        commit: null,
      },
    ],
    { branch: null, exit_reason: "MAX_ITERATIONS" },
  ),
];
const DIFFSTAT = {
  files_changed: 2,
  insertions: 40,
  deletions: 3,
  text: " prd.json        |  2 +-\n src/login.ts    | 41 ++++++++++++++++++++++++++++++++++++++++-\n 2 files changed, 40 insertions(+), 3 deletions(-)\n",
};

const report = buildReport(parent, children, DIFFSTAT);

/** Compares with the golden file; UPDATE_GOLDEN=1 rewrites it instead. */
function matchesGolden(name: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(golden(name), actual);
  assert.equal(actual, readFileSync(golden(name), "utf8"));
}

test("report of a --parallel parent as Markdown: the golden file", () => {
  matchesGolden("report-parallel.md", renderReportMarkdown(report));
});

test("report of a --parallel parent as JSON: the golden file, valid against schemas/report.schema.json", () => {
  const json = `${JSON.stringify(report, null, 2)}\n`;
  matchesGolden("report-parallel.json", json);
  const schema = JSON.parse(
    readFileSync(new URL("../../../schemas/report.schema.json", import.meta.url), "utf8"),
  ) as object;
  assert.deepEqual(
    schema,
    JSON.parse(JSON.stringify(z.toJSONSchema(runReportSchema))),
    "schemas/ is regenerated (npm run schemas)",
  );
  const validate = new Ajv2020({ strict: false }).compile(schema);
  assert.ok(validate(JSON.parse(json)), JSON.stringify(validate.errors));
  // A known-false control: the schema rejects a report missing its children.
  assert.equal(validate({ ...report, children: undefined }), false);
});
