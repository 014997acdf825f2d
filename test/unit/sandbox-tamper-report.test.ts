// A planted path is named by the agent: written into run.log and `ralph report`, a name with a newline or a
// terminal escape sequence must neither forge a line nor drive the person's terminal, nor close the report's
// code span. The event keeps the name as it is (JSON holds any string). The known-false control: the name
// joined as it is starts a line of its own and carries the escape character.
import { test } from "node:test";
import assert from "node:assert/strict";
import { buildReport } from "../../src/report/build-report.js";
import { renderReportMarkdown } from "../../src/cli/render-report.js";
import { tamperedChecks, tamperedRun } from "../../src/engine/sandbox-tamper.js";
import type { AgentRun } from "../../src/engine/phase.js";
import type { RunRecord } from "../../src/run/run-record.js";
import type { RunEvent } from "../../src/store/event-log.js";
import type { RunStatus } from "../../src/store/status-file.js";

const FORGED = "2026-03-01T10:00:00.000Z iteration 1: all criteria passed";
const NAME = `sub\n${FORGED}\u001b]52;c;cm0gLXJmIH4=\u0007\u202e\`x\`/.git`;

/** A run record that keeps what is logged and evented. */
function record(): { record: RunRecord; lines: string[]; events: Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const events: Array<Record<string, unknown>> = [];
  const fake = {
    paths: { dir: "/project/.ralph/runs/x" },
    log: (line: string) => lines.push(line),
    event: (body: Record<string, unknown>) => events.push(body),
  };
  return { record: fake as unknown as RunRecord, lines, events };
}

function forges(text: string): boolean {
  return (
    text.split("\n").some((line) => line.startsWith(FORGED)) ||
    ["\u001b", "\u0007", "\u202e"].some((char) => text.includes(char))
  );
}

test("run.log: the agent's planted path is one visible line; the event keeps it as it is", () => {
  const { record: fake, lines, events } = record();
  const run = {
    kind: "finished",
    endedBy: null,
    outcome: { finalMessage: "done", error: null },
  } as unknown as AgentRun;
  tamperedRun(fake, 1, run, [NAME, "ok/.git"]);
  const verdicts = tamperedChecks(fake, 1, [{ check: "npm test", passed: true, detail: "exit 0" } as never], [NAME]);
  assert.equal(lines.length, 2);
  for (const line of [...lines, ...verdicts.map((verdict) => String((verdict as { detail: string }).detail))]) {
    assert.equal(forges(line), false, line);
    assert.match(line, /sub\\x0a2026/);
  }
  assert.deepEqual(events[0]?.paths, [NAME, "ok/.git"]);
  // Control: the name as it is forges a line.
  assert.equal(forges(`planted: ${NAME}`), true);
});

test("ralph report: the planted path stays inside its code span, on one line, controls shown", () => {
  const status = {
    schema_version: 1,
    run_id: "x",
    mode: "run",
    pid: 1,
    pid_start: null,
    hostname: "h",
    cwd: "/project",
    agent: "command",
    state: "ended",
    iteration: 1,
    max_iterations: 1,
    calls: 1,
    cost_usd: 0,
    tokens: { input: 0, output: 0 },
    session_id: null,
    current_task: null,
    started_at: "2026-03-01T10:00:00.000Z",
    updated_at: "2026-03-01T10:00:00.000Z",
    ended_at: "2026-03-01T10:00:00.000Z",
    exit_reason: "MAX_ITERATIONS",
    exit_code: 1,
    last_action: "ended",
  } as RunStatus;
  const events = [
    { type: "iteration_started", iteration: 1, task: null },
    { type: "sandbox_tamper", iteration: 1, paths: [NAME] },
    { type: "iteration_ended", iteration: 1, result: "failed", duration_ms: 1, cost_usd: 0, commit: null },
  ].map((body) => ({ v: 1, ts: "2026-03-01T10:00:00.000Z", run: "x", ...body }) as RunEvent);
  const markdown = renderReportMarkdown(buildReport({ id: "x", status, events }, [], null));
  const planted = markdown.split("\n").filter((line) => line.startsWith("- iteration 1: "));
  assert.equal(planted.length, 1, markdown);
  assert.equal(forges(markdown), false, markdown);
  // The code span is opened by a longer run of backticks than the name holds, and closed by the same.
  assert.match(planted[0] ?? "", /^- iteration 1: ``sub\\x0a.*`x`\/\.git``$/);
});
