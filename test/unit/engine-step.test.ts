// Every transition of the engine's pure step function, table-driven: phase × input → phase + effects.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { step } from "../../src/engine/step.js";
import { statusOf } from "../../src/engine/status-of.js";
import { failureKey } from "../../src/engine/guards.js";
import type { Effect, Input, JudgingPhase, Machine, Phase, ReviewResult, Step } from "../../src/engine/phase.js";
import type { Criterion } from "../../src/judge/criteria.js";
import type { RecordEntry } from "../../src/run/run-record.js";
import { ATTEMPT, finished, machine, plan, verdict } from "../fixtures/engine-machine.js";

const boundary: Phase = { id: "boundary" };
const paused: Phase = { id: "paused" };
const running: Phase = { id: "running", attempt: ATTEMPT, resultSeen: false };
const judging = (run = finished("<promise>DONE</promise>"), failure: string | null = null): Phase => ({
  id: "judging",
  attempt: ATTEMPT,
  run,
  claim: { found: true, reason: "found" },
  failure,
  marked: [],
  tasksAfter: null,
});
const waiting: Phase = { id: "waitingLimit", iteration: 2, resumeAtMs: 10_000 };
const needsHuman: Phase = { id: "needsHuman" };
const QUESTION = { question: { text: "Which database?", iteration: 1 } };
/** Judging an iteration whose final message is `message` and claimed nothing. */
const unclaimed = (message: string, failure: string | null = null, prompt = ATTEMPT.prompt): Phase => ({
  id: "judging",
  attempt: { ...ATTEMPT, prompt },
  run: finished(message),
  claim: { found: false, reason: "absent" },
  failure,
  marked: [],
  tasksAfter: null,
});
const NOTHING_CHECKED: Input = { type: "checked", verdicts: [], fingerprint: null };
const stopNowEnding: Phase = {
  id: "ending",
  ending: { reason: "STOPPED", detail: "stop --now ended the agent" },
  attempt: ATTEMPT,
  judged: null,
};

const clear = (nowMs = 1000): Input => ({ type: "sentinel", stop: false, stopNow: false, pause: false, nowMs });
const sentinel = (patch: Partial<{ stop: boolean; stopNow: boolean; pause: boolean }>, nowMs = 1000): Input =>
  ({ ...(clear(nowMs) as object), ...patch }) as Input;
const desired = (patch: Partial<ReturnType<typeof plan>> = {}): Input => ({
  type: "desired",
  read: { ok: true, plan: plan(patch) },
});
const TWO_TASKS = (secondDone: boolean): Machine["tasks"] => ({
  ok: true,
  format: "prd",
  tasks: [
    { id: "US-1", title: "first", done: false, priority: 1 },
    { id: "US-2", title: "second", done: secondDone, priority: 2 },
  ],
});
const SIGINT: Input = { type: "signal", signal: "SIGINT" };
const ALL_DONE: Machine["tasks"] = {
  ok: true,
  format: "checklist",
  tasks: [{ id: "1", title: "a", done: true, line: 1 }],
};
const verifying: Phase = { id: "verifying", ending: null };
const REVIEW: Criterion = {
  type: "review",
  check: "codex",
  review: { agent: "codex", model: null, prompt: null, command: null, timeoutMs: 60_000 },
};
const REVIEWED = plan({ completionCriteria: [{ type: "command", check: "npm test" }, REVIEW] });
const reviewing: Phase = {
  id: "reviewing",
  judging: judging() as JudgingPhase,
  checked: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
};
const reviewed = (verdict: ReviewResult["verdict"]): ReviewResult => ({
  criterion: REVIEW,
  agent: "codex",
  verdict,
  reason: verdict === "none" ? "no tag" : null,
  findings: verdict === "changes" ? "README.md: add usage" : "",
  costUsd: 0.05,
  tokens: { input: 1, output: 1 },
  durationMs: 10,
});

const kinds = (effects: Effect[]) => effects.map((effect) => effect.kind);
const entries = (result: Step): RecordEntry[] =>
  result.effects.flatMap((effect) => (effect.kind === "record" ? effect.entries : []));
const logLines = (result: Step) => entries(result).flatMap((entry) => (entry.kind === "log" ? [entry.line] : []));
const eventTypes = (result: Step) =>
  entries(result).flatMap((entry) => (entry.kind === "event" ? [entry.body.type] : []));
const progressOf = (result: Step, key: string) =>
  entries(result).flatMap((entry) =>
    entry.kind === "progress" ? entry.block.filter(([k, v]) => k === key && v !== undefined).map(([, v]) => v) : [],
  );
const endingOf = (result: Step) =>
  result.machine.phase.id === "ended" || result.machine.phase.id === "ending" ? result.machine.phase.ending : null;

interface Case {
  name: string;
  from: Machine;
  input: Input;
  phase: Phase["id"];
  effects: Effect["kind"][];
  reason?: string;
  check?: (result: Step) => void;
}

const CASES: Case[] = [
  // boundary
  {
    name: "boundary + signal → ended INTERRUPTED, nothing judged",
    from: machine(boundary),
    input: SIGINT,
    phase: "ended",
    effects: [],
    reason: "INTERRUPTED",
  },
  {
    name: "boundary + state.md active: false → ended STOPPED",
    from: machine(boundary),
    input: desired({ active: false }),
    phase: "ended",
    effects: [],
    reason: "STOPPED",
  },
  {
    name: "boundary + a broken state.md → logged once, the last good plan kept",
    from: machine(boundary),
    input: { type: "desired", read: { ok: false, message: "state.md: bad" } },
    phase: "boundary",
    effects: ["record"],
    check: (result) => {
      assert.equal(result.machine.planProblem, "state.md: bad");
      assert.equal(
        step(result.machine, { type: "desired", read: { ok: false, message: "state.md: bad" } }).effects.length,
        0,
      );
    },
  },
  {
    name: "boundary + a raised max_iterations → logged and applied",
    from: machine(boundary),
    input: desired({ maxIterations: 9 }),
    phase: "boundary",
    effects: ["record"],
    check: (result) => {
      assert.deepEqual(logLines(result), ["max_iterations changed to 9 in state.md"]);
      assert.equal(statusOf(result.machine).max_iterations, 9);
    },
  },
  {
    name: "boundary + STOP → ended STOPPED",
    from: machine(boundary),
    input: sentinel({ stop: true }),
    phase: "ended",
    effects: [],
    reason: "STOPPED",
  },
  {
    name: "boundary + PAUSE → paused, logged and published once",
    from: machine(boundary),
    input: sentinel({ pause: true }),
    phase: "paused",
    effects: ["record"],
    check: (result) => {
      assert.deepEqual(eventTypes(result), ["paused"]);
      assert.equal(statusOf(result.machine).state, "paused");
    },
  },
  {
    name: "boundary + clear at the cap → ended MAX_ITERATIONS",
    from: machine(boundary, {}, { iteration: 5 }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "MAX_ITERATIONS",
  },
  {
    name: "boundary + clear past --max-runtime → ended RUNTIME_EXCEEDED",
    from: machine(boundary, { config: { ...machine(boundary).config, maxRuntimeMs: 500 } }),
    input: clear(1000),
    phase: "ended",
    effects: [],
    reason: "RUNTIME_EXCEEDED",
  },
  {
    name: "boundary + clear at --max-cost → ended BUDGET_EXCEEDED",
    from: machine(boundary, { config: { ...machine(boundary).config, maxCostUsd: 0.1 } }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "BUDGET_EXCEEDED",
  },
  {
    name: "boundary + --task that is not done → its task is spawned, not the first pending one",
    from: machine(boundary, { tasks: TWO_TASKS(false), config: { ...machine(boundary).config, onlyTask: "US-2" } }),
    input: clear(),
    phase: "running",
    effects: ["record", "spawn"],
    check: (result) => assert.equal(result.machine.tally.task, "US-2: second"),
  },
  {
    name: "boundary + --task marked done → ended DONE, even at --max-cost",
    from: machine(boundary, {
      tasks: TWO_TASKS(true),
      config: { ...machine(boundary).config, onlyTask: "US-2", maxCostUsd: 0.1 },
    }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "DONE",
  },
  {
    name: "boundary + STOP with --task marked done → ended DONE (the last iteration's verdict comes first)",
    from: machine(boundary, { tasks: TWO_TASKS(true), config: { ...machine(boundary).config, onlyTask: "US-2" } }),
    input: sentinel({ stop: true }),
    phase: "ended",
    effects: [],
    reason: "DONE",
  },
  {
    name: "boundary + --task-index whose task was done before any iteration → ended NO_WORK",
    from: machine(
      boundary,
      { tasks: TWO_TASKS(true), config: { ...machine(boundary).config, onlyTask: "US-2", onlyTaskByIndex: true } },
      { iteration: 0 },
    ),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "NO_WORK",
  },
  {
    name: "boundary + --task-index whose task an iteration marked done → ended DONE",
    from: machine(boundary, {
      tasks: TWO_TASKS(true),
      config: { ...machine(boundary).config, onlyTask: "US-2", onlyTaskByIndex: true },
    }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "DONE",
  },
  {
    name: "boundary + --task-index whose task is pending, the others done or not → its task is spawned",
    from: machine(
      boundary,
      { tasks: TWO_TASKS(false), config: { ...machine(boundary).config, onlyTask: "US-1", onlyTaskByIndex: true } },
      { iteration: 0 },
    ),
    input: clear(),
    phase: "running",
    effects: ["record", "spawn"],
    check: (result) => assert.match(result.machine.tally.task ?? "", /^US-1/),
  },
  {
    name: "boundary + --task gone from the list → ended FAILED",
    from: machine(boundary, { tasks: TWO_TASKS(false), config: { ...machine(boundary).config, onlyTask: "US-9" } }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "FAILED",
  },
  {
    name: "boundary + clear with a broken task list → ended FAILED",
    from: machine(boundary, { tasks: { ok: false, file: "prd.json", message: "is not valid JSON" } }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "FAILED",
  },
  {
    name: "boundary + clear with every task done, the checks passed on this tree → ended NO_WORK",
    from: machine(boundary, { tasks: ALL_DONE }, { gatesOk: true }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "NO_WORK",
  },
  {
    name: "boundary + clear with every task done, the checks not run since → verifying: the checks run first",
    from: machine(boundary, { tasks: ALL_DONE }),
    input: clear(),
    phase: "verifying",
    effects: ["record", "runChecks"],
  },
  {
    name: "boundary + clear with every task done, the checks failing → running with no task, the output in the prompt",
    from: machine(boundary, { tasks: ALL_DONE }, { gatesOk: false, failingChecks: "npm test failed" }),
    input: clear(),
    phase: "running",
    effects: ["record", "spawn"],
    check: (result) => {
      assert.equal(result.machine.tally.task, null);
      assert.match(
        result.effects.find((effect) => effect.kind === "spawn")?.attempt.prompt.toString() ?? "",
        /npm test failed/,
      );
    },
  },
  {
    name: "verifying + the checks pass → ended NO_WORK",
    from: machine(verifying),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "NO_WORK",
  },
  {
    name: "verifying + a check fails → boundary, the failure carried into the next prompt",
    from: machine(verifying),
    input: { type: "checked", verdicts: [verdict(false)], fingerprint: null },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => {
      assert.equal(result.machine.tally.gatesOk, false);
      assert.match(result.machine.tally.failingChecks, /marked done, but the checks fail/);
    },
  },
  {
    name: "verifying + signal → the checks are ended, then ended INTERRUPTED",
    from: machine(verifying),
    input: SIGINT,
    phase: "verifying",
    effects: ["endTree"],
    check: (result) => assert.equal(endingOf(step(result.machine, NOTHING_CHECKED))?.reason, "INTERRUPTED"),
  },
  {
    name: "boundary + clear → running: iteration_started, then spawn with the task and failing checks in the prompt",
    from: machine(
      boundary,
      { tasks: { ok: true, format: "checklist", tasks: [{ id: "3", title: "write docs", done: false, line: 3 }] } },
      { failingChecks: "npm test failed" },
    ),
    input: clear(),
    phase: "running",
    effects: ["record", "spawn"],
    check: (result) => {
      const spawn = result.effects.find((effect) => effect.kind === "spawn");
      assert.ok(spawn?.kind === "spawn");
      assert.equal(spawn.attempt.iteration, 2);
      assert.equal(spawn.attempt.task, "line 3: write docs");
      assert.match(spawn.attempt.prompt.toString(), /## Current task\n\nline 3: write docs/);
      assert.match(spawn.attempt.prompt.toString(), /npm test failed/);
      assert.deepEqual(eventTypes(result), ["iteration_started"]);
      assert.deepEqual(
        [statusOf(result.machine).iteration, statusOf(result.machine).current_task],
        [2, "line 3: write docs"],
      );
    },
  },
  {
    name: "boundary + control → nothing (a look is under way)",
    from: machine(boundary),
    input: { type: "control" },
    phase: "boundary",
    effects: [],
  },

  // paused
  {
    name: "paused + signal → ended INTERRUPTED, 'resumed (to stop)' logged",
    from: machine(paused),
    input: SIGINT,
    phase: "ended",
    effects: ["record"],
    reason: "INTERRUPTED",
    check: (result) => assert.deepEqual(logLines(result), ["resumed (to stop)"]),
  },
  {
    name: "paused + active: false → ended STOPPED",
    from: machine(paused),
    input: desired({ active: false }),
    phase: "ended",
    effects: ["record"],
    reason: "STOPPED",
  },
  {
    name: "paused + STOP → ended STOPPED",
    from: machine(paused),
    input: sentinel({ stop: true, pause: true }),
    phase: "ended",
    effects: ["record"],
    reason: "STOPPED",
  },
  {
    name: "paused + PAUSE still there → stays paused, nothing logged",
    from: machine(paused),
    input: sentinel({ pause: true }),
    phase: "paused",
    effects: [],
  },
  {
    name: "paused + PAUSE removed → boundary: resumed once, then a fresh look",
    from: machine(paused),
    input: clear(),
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => assert.deepEqual(eventTypes(result), ["resumed"]),
  },
  {
    name: "paused + control → look at state.md and the sentinels",
    from: machine(paused),
    input: { type: "control" },
    phase: "paused",
    effects: ["look"],
    check: (result) => assert.deepEqual(result.effects, [{ kind: "look", what: "control" }]),
  },

  // running
  {
    name: "running + signal → ending INTERRUPTED: the tree is ended, nothing judged",
    from: machine(running),
    input: { type: "signal", signal: "SIGTERM" },
    phase: "ending",
    effects: ["endTree"],
    reason: "INTERRUPTED",
    check: (result) => assert.deepEqual(result.effects, [{ kind: "endTree", why: "interrupted" }]),
  },
  {
    name: "running + stop --now → ending STOPPED: the tree is ended",
    from: machine(running),
    input: sentinel({ stop: true, stopNow: true }),
    phase: "ending",
    effects: ["endTree"],
    reason: "STOPPED",
    check: (result) => assert.deepEqual(result.effects, [{ kind: "endTree", why: "stop_now" }]),
  },
  {
    name: "running + a plain STOP → waits for the boundary",
    from: machine(running),
    input: sentinel({ stop: true, pause: true }),
    phase: "running",
    effects: [],
  },
  {
    name: "running + control → look at the sentinels only",
    from: machine(running),
    input: { type: "control" },
    phase: "running",
    effects: ["look"],
    check: (result) => assert.deepEqual(result.effects, [{ kind: "look", what: "sentinels" }]),
  },
  {
    name: "running + agent result seen → still running, result noted",
    from: machine(running),
    input: { type: "agentResult" },
    phase: "running",
    effects: [],
    check: (result) => assert.equal(result.machine.phase.id === "running" && result.machine.phase.resultSeen, true),
  },
  {
    name: "running + agent missing → ended FAILED, recorded as agent_missing",
    from: machine(running),
    input: { type: "agentExited", run: { kind: "missing", message: "command not found: nope" } },
    phase: "ended",
    effects: ["record"],
    reason: "FAILED",
    check: (result) => assert.deepEqual(progressOf(result, "result"), ["agent_missing"]),
  },
  {
    name: "running + exited claiming the promise → judging, the criteria are checked",
    from: machine(running),
    input: { type: "agentExited", run: finished("All done.\n<promise>DONE</promise>") },
    phase: "judging",
    effects: ["runChecks"],
    check: (result) => {
      const checks = result.effects[0];
      assert.ok(checks?.kind === "runChecks");
      assert.deepEqual(checks.criteria, [{ type: "command", check: "npm test" }]);
    },
  },
  {
    name: "running + exited without the promise → judging, no check runs",
    from: machine(running),
    input: { type: "agentExited", run: finished("Still working.") },
    phase: "judging",
    effects: ["runChecks"],
    check: (result) =>
      assert.deepEqual(result.effects[0]?.kind === "runChecks" ? result.effects[0].criteria : null, []),
  },
  {
    name: "running + a failed exit → judging, no check and no fingerprint",
    from: machine(running, { config: { ...machine(running).config, stallLimit: 2 } }),
    input: { type: "agentExited", run: finished(null, { exit: { code: 1, signal: null } }, { sawResult: false }) },
    phase: "judging",
    effects: ["runChecks"],
    check: (result) =>
      assert.deepEqual(result.effects[0], { kind: "runChecks", iteration: 2, criteria: [], fingerprint: false }),
  },
  {
    name: "running + usage limit → waitingLimit: not counted, spend kept, sleep until the reset",
    from: machine(running, {}, { iteration: 2 }),
    input: { type: "limitHit", run: finished(null), limit: { message: "429", resetAt: new Date(60_000) }, nowMs: 1000 },
    phase: "waitingLimit",
    effects: ["record", "sleep"],
    check: (result) => {
      assert.deepEqual(result.effects[1], { kind: "sleep", untilMs: 60_000 });
      assert.deepEqual(eventTypes(result), ["iteration_ended", "waiting_limit"]);
      const status = statusOf(result.machine);
      assert.deepEqual(
        [status.iteration, status.calls, status.state, status.resume_at],
        [1, 2, "waiting", new Date(60_000).toISOString()],
      );
    },
  },
  {
    name: "running + usage limit with --on-limit stop → ended FAILED",
    from: machine(running, { config: { ...machine(running).config, onLimit: "stop" } }),
    input: { type: "limitHit", run: finished(null), limit: { message: "429", resetAt: null }, nowMs: 1000 },
    phase: "ended",
    effects: ["record"],
    reason: "FAILED",
  },

  // judging
  {
    name: "judging + signal → ending INTERRUPTED: the checks are ended, the verdict is never used",
    from: machine(judging()),
    input: SIGINT,
    phase: "ending",
    effects: ["endTree"],
    reason: "INTERRUPTED",
  },
  {
    name: "judging + checks pass with the promise → ended DONE, LOOP_COMPLETE logged",
    from: machine(judging()),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "DONE",
    check: (result) => {
      assert.ok(logLines(result).includes("LOOP_COMPLETE: all criteria met."));
      assert.deepEqual(eventTypes(result), ["criteria_checked", "iteration_ended"]);
      assert.deepEqual(progressOf(result, "result"), ["done"]);
    },
  },
  {
    name: "judging + a check fails after the claim → boundary, its output goes into the next prompt",
    from: machine(judging()),
    input: { type: "checked", verdicts: [verdict(false)], fingerprint: null },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => {
      assert.match(result.machine.tally.failingChecks, /1 failing/);
      assert.deepEqual([result.machine.tally.calls, result.machine.tally.costUsd], [2, 0.35]);
    },
  },
  {
    name: "judging + a task marked done and a check failing → reopened before the next look, the promise does not end the run",
    from: machine(
      {
        ...(judging() as Phase & { id: "judging" }),
        marked: [{ id: "US-1", title: "first", done: true, priority: 1 }],
        tasksAfter: { ok: true, format: "prd", tasks: [{ id: "US-1", title: "first", done: true, priority: 1 }] },
      },
      { tasks: TWO_TASKS(true), plan: plan({ tasks: "prd.json" }) },
    ),
    input: { type: "checked", verdicts: [verdict(false)], fingerprint: null },
    phase: "boundary",
    effects: ["record", "reopenTasks", "look"],
    check: (result) => {
      assert.deepEqual(
        eventTypes(result).filter((type) => type === "tasks_reopened"),
        ["tasks_reopened"],
      );
      assert.match(
        result.machine.tally.failingChecks,
        /You marked this task done in prd\.json: US-1: first\. A check failed on that tree, so it was reopened/,
      );
      assert.match(result.machine.tally.failingChecks, /1 failing/);
    },
  },
  {
    name: "judging + the last task marked done, checks passing, the promise → ended DONE, nothing reopened",
    from: machine(
      {
        ...(judging() as Phase & { id: "judging" }),
        marked: [{ id: "US-1", title: "first", done: true, priority: 1 }],
        tasksAfter: {
          ok: true,
          format: "prd",
          tasks: [
            { id: "US-1", title: "first", done: true, priority: 1 },
            { id: "US-2", title: "second", done: true, priority: 2 },
          ],
        },
      },
      { tasks: TWO_TASKS(true), plan: plan({ tasks: "prd.json" }) },
    ),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "DONE",
  },
  {
    name: "judging + the promise and passing checks with a task open → boundary: on to the next task",
    from: machine(judging(), { tasks: TWO_TASKS(false), plan: plan({ tasks: "prd.json" }) }),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) =>
      assert.ok(
        logLines(result).some((line) =>
          /the promise was found, but 2 task\(s\) in prd\.json are still open; moving on to the next: US-1: first/.test(
            line,
          ),
        ),
      ),
  },
  {
    name: "judging + a failed iteration below --max-failures → boundary, failures counted",
    from: machine(judging(finished(null), "exit 1")),
    input: { type: "checked", verdicts: [], fingerprint: null },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => assert.equal(statusOf(result.machine).failures, 1),
  },
  {
    name: "judging + the failure that reaches --max-failures → ended FAILED",
    from: machine(judging(finished(null), "exit 1"), {}, { failures: 2 }),
    input: { type: "checked", verdicts: [], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "FAILED",
  },
  {
    name: "judging + an unchanged fingerprint at --stall-limit → ended STALLED",
    from: machine(
      judging(finished("working")),
      { config: { ...machine(boundary).config, stallLimit: 2 } },
      { stalled: 1, fingerprint: { ok: true, head: "abc", tree: "t", tasks: null } },
    ),
    input: { type: "checked", verdicts: [], fingerprint: { ok: true, head: "abc", tree: "t", tasks: null } },
    phase: "ended",
    effects: ["record"],
    reason: "STALLED",
  },
  {
    name: "judging + an unchanged fingerprint at --stall-limit on the cap's last iteration → ended MAX_ITERATIONS, saying no progress was seen, no guard fired",
    from: machine(
      judging(finished("working")),
      { plan: plan({ maxIterations: 2 }), config: { ...machine(boundary).config, stallLimit: 2 } },
      { iteration: 2, stalled: 1, fingerprint: { ok: true, head: "abc", tree: "t", tasks: null } },
    ),
    input: { type: "checked", verdicts: [], fingerprint: { ok: true, head: "abc", tree: "t", tasks: null } },
    phase: "ended",
    effects: ["record"],
    reason: "MAX_ITERATIONS",
    check: (result) => {
      assert.match(
        endingOf(result)?.detail ?? "",
        /^reached max_iterations 2; no progress was seen in the last 2 iterations/,
      );
      assert.deepEqual(
        eventTypes(result).filter((type) => type === "guard_fired"),
        [],
      );
      assert.ok(!logLines(result).some((line) => line.startsWith("guard ")), logLines(result).join("\n"));
    },
  },
  {
    name: "judging + the same failing check at --same-failure-limit on the cap's last iteration → ended MAX_ITERATIONS naming the failure",
    from: machine(
      judging(),
      { plan: plan({ maxIterations: 2 }), config: { ...machine(boundary).config, sameFailureLimit: 2 } },
      { iteration: 2, repeat: { ...failureKey(null, [verdict(false)])!, count: 1 } },
    ),
    input: { type: "checked", verdicts: [verdict(false)], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "MAX_ITERATIONS",
    check: (result) => {
      assert.match(
        endingOf(result)?.detail ?? "",
        /^reached max_iterations 2; the same failure 2 times in a row: check `npm test` exit 1 \(1 failing\)$/,
      );
      assert.deepEqual(
        eventTypes(result).filter((type) => type === "guard_fired"),
        [],
      );
    },
  },
  {
    name: "judging + the same failing check at --same-failure-limit before the cap → ended FAILED by the guard",
    from: machine(
      judging(),
      { plan: plan({ maxIterations: 5 }), config: { ...machine(boundary).config, sameFailureLimit: 2 } },
      { iteration: 2, repeat: { ...failureKey(null, [verdict(false)])!, count: 1 } },
    ),
    input: { type: "checked", verdicts: [verdict(false)], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "FAILED",
    check: (result) => assert.ok(eventTypes(result).includes("guard_fired")),
  },
  {
    name: "judging + an agent failure that reaches --max-failures on the cap's last iteration → still ended FAILED",
    from: machine(
      judging(finished(null), "exit 1"),
      { plan: plan({ maxIterations: 3 }) },
      { iteration: 3, failures: 2 },
    ),
    input: { type: "checked", verdicts: [], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "FAILED",
  },
  {
    name: "boundary + the cap reached in a dry run → ended DRY_RUN (exit 0), not MAX_ITERATIONS",
    from: machine(boundary, { config: { ...machine(boundary).config, dryRun: true } }, { iteration: 5 }),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "DRY_RUN",
    check: (result) =>
      assert.equal(endingOf(result)?.detail, "showed 5 iterations (reached max_iterations 5); no agent was started"),
  },
  {
    name: "running + the agent exited in a dry run → judging, no progress fingerprint asked for",
    from: machine(running, { config: { ...machine(running).config, stallLimit: 3, dryRun: true } }),
    input: { type: "agentExited", run: finished(null) },
    phase: "judging",
    effects: ["runChecks"],
    check: (result) =>
      assert.deepEqual(
        result.effects.map((effect) => (effect.kind === "runChecks" ? effect.fingerprint : null)),
        [false],
      ),
  },
  {
    name: "judging + a changed fingerprint → boundary, the stall count reset",
    from: machine(
      judging(finished("working")),
      { config: { ...machine(boundary).config, stallLimit: 2 } },
      { stalled: 1, fingerprint: { ok: true, head: "abc", tree: "t", tasks: null } },
    ),
    input: { type: "checked", verdicts: [], fingerprint: { ok: true, head: "def", tree: "t", tasks: null } },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => assert.equal(result.machine.tally.stalled, 0),
  },

  // waitingLimit
  {
    name: "waitingLimit + signal → ended INTERRUPTED",
    from: machine(waiting),
    input: SIGINT,
    phase: "ended",
    effects: [],
    reason: "INTERRUPTED",
  },
  {
    name: "waitingLimit + active: false → ended STOPPED",
    from: machine(waiting),
    input: desired({ active: false }),
    phase: "ended",
    effects: [],
    reason: "STOPPED",
  },
  {
    name: "waitingLimit + STOP → ended STOPPED",
    from: machine(waiting),
    input: sentinel({ stop: true }),
    phase: "ended",
    effects: [],
    reason: "STOPPED",
  },
  {
    name: "waitingLimit + --max-runtime passed while waiting → ended RUNTIME_EXCEEDED",
    from: machine(waiting, { config: { ...machine(waiting).config, maxRuntimeMs: 5000 } }),
    input: clear(6000),
    phase: "ended",
    effects: [],
    reason: "RUNTIME_EXCEEDED",
  },
  {
    name: "waitingLimit + clear before the reset → keeps waiting",
    from: machine(waiting),
    input: clear(9999),
    phase: "waitingLimit",
    effects: [],
  },
  {
    name: "waitingLimit + clear at the reset → boundary: the iteration is retried",
    from: machine(waiting),
    input: clear(10_000),
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => assert.deepEqual(logLines(result), ["usage limit wait over; retrying iteration 2"]),
  },
  {
    name: "waitingLimit + tick → look",
    from: machine(waiting),
    input: { type: "tick", nowMs: 10_000 },
    phase: "waitingLimit",
    effects: ["look"],
  },
  {
    name: "waitingLimit + control → look",
    from: machine(waiting),
    input: { type: "control" },
    phase: "waitingLimit",
    effects: ["look"],
  },

  // ending
  {
    name: "ending + agent exited → ended, the iteration recorded as stopped, unjudged, its spend kept",
    from: machine(stopNowEnding),
    input: { type: "agentExited", run: finished("<promise>DONE</promise>", { endedBy: "stop_now" }) },
    phase: "ended",
    effects: ["record"],
    reason: "STOPPED",
    check: (result) => {
      assert.deepEqual(progressOf(result, "result"), ["stopped"]);
      assert.deepEqual(progressOf(result, "promise_found"), []);
      assert.equal(result.machine.tally.calls, 2);
    },
  },
  {
    name: "ending (stop --now) + signal → the signal wins: INTERRUPTED",
    from: machine(stopNowEnding),
    input: SIGINT,
    phase: "ending",
    effects: [],
    reason: "INTERRUPTED",
  },
  {
    name: "ending after judging + checks over → ended, recorded as interrupted",
    from: machine({
      id: "ending",
      ending: { reason: "INTERRUPTED", detail: "received SIGINT", signal: "SIGINT" },
      attempt: ATTEMPT,
      judged: finished("<promise>DONE</promise>"),
    }),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "INTERRUPTED",
    check: (result) => {
      assert.deepEqual(progressOf(result, "result"), ["interrupted"]);
      assert.deepEqual(eventTypes(result), ["iteration_ended"], "no criteria_checked: the verdicts are not used");
    },
  },
  {
    name: "ending + the agent was missing → ended with the ending's reason",
    from: machine({
      id: "ending",
      ending: { reason: "INTERRUPTED", detail: "received SIGINT", signal: "SIGINT" },
      attempt: ATTEMPT,
      judged: null,
    }),
    input: { type: "agentExited", run: { kind: "missing", message: "x" } },
    phase: "ended",
    effects: ["record"],
    reason: "INTERRUPTED",
  },

  // a run file that cannot be written (a full disk)
  {
    name: "boundary + failed write → ended FAILED, the failure named",
    from: machine(boundary),
    input: { type: "recordFailed", message: "disk full" },
    phase: "ended",
    effects: [],
    reason: "FAILED",
    check: (result) => assert.equal(endingOf(result)?.detail, "disk full"),
  },
  {
    name: "running + failed write → ending FAILED: the tree is ended",
    from: machine(running),
    input: { type: "recordFailed", message: "disk full" },
    phase: "ending",
    effects: ["endTree"],
    reason: "FAILED",
    check: (result) => assert.deepEqual(result.effects, [{ kind: "endTree", why: "write_failed" }]),
  },
  {
    name: "judging + failed write → ending FAILED: the checks are ended",
    from: machine(judging()),
    input: { type: "recordFailed", message: "disk full" },
    phase: "ending",
    effects: ["endTree"],
    reason: "FAILED",
  },
  {
    name: "running + a trusted plan (ralph set) → applied at once, the run goes on",
    from: machine(running),
    input: desired({ maxIterations: 2 }),
    phase: "running",
    effects: ["record"],
    check: (result) => assert.equal(statusOf(result.machine).max_iterations, 2),
  },
  {
    name: "judging + a fatal agent error (auth) → ended FAILED at once, whatever --max-failures says",
    from: machine(
      judging(
        finished(null, { exit: { code: 1, signal: null } }, { error: { kind: "auth", message: "invalid key" } }),
        "auth: invalid key",
      ),
    ),
    input: { type: "checked", verdicts: [], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "FAILED",
    check: (result) =>
      assert.match(endingOf(result)?.detail ?? "", /authentication failed: invalid key; no retry can fix this/),
  },

  // questions: judging → needsHuman → boundary
  {
    name: "judging + a final <ask> → needsHuman: needs_human published, the question kept, the world looked at",
    from: machine(unclaimed("Two options here.\n<ask>Which database?</ask>\n")),
    input: NOTHING_CHECKED,
    phase: "needsHuman",
    effects: ["record", "look"],
    check: (result) => {
      assert.deepEqual(eventTypes(result), ["iteration_ended", "needs_human"]);
      assert.deepEqual(progressOf(result, "result"), ["asked"]);
      assert.deepEqual(result.machine.tally.question, { text: "Which database?", iteration: 2 });
      const status = statusOf(result.machine);
      assert.deepEqual([status.state, status.question, status.answer], ["needs_human", "Which database?", null]);
    },
  },
  {
    name: "judging + a proven completion that also asks → ended DONE: completion outranks the question, which is logged",
    from: machine({ ...(judging(finished("<promise>DONE</promise>\n<ask>Deploy too?</ask>")) as object) } as Phase),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "ended",
    effects: ["record"],
    reason: "DONE",
    check: (result) => {
      assert.ok(logLines(result).includes('the agent asked: "Deploy too?" (the run is done, so nobody is asked)'));
      assert.ok(!eventTypes(result).includes("needs_human"));
    },
  },
  {
    name: "judging + a final <ask> with --on-ask continue → boundary: the question is only logged",
    from: machine(unclaimed("<ask>Which database?</ask>"), {
      config: { ...machine(boundary).config, onAsk: "continue" },
    }),
    input: NOTHING_CHECKED,
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => {
      assert.ok(
        logLines(result).includes('the agent asked: "Which database?" (--on-ask continue: going on without an answer)'),
      );
      assert.ok(!eventTypes(result).includes("needs_human"));
      assert.equal(result.machine.tally.question, null);
    },
  },
  ...(
    [
      ["quoted", 'I could write "<ask>Which database?</ask>"', "inside quotes"],
      ["code-spanned", "`<ask>Which database?</ask>`", "inside Markdown code"],
      ["negated", "I will not ask <ask>Which database?</ask>", "negated"],
      ["conditional", "If I get stuck I will end with <ask>Which database?</ask>", "statement of intent"],
      ["echoed from the prompt", "Here is my question <ask>Which database?</ask>", "echoed"],
      ["followed by more text", "<ask>Which database?</ask>\nGoing on with Postgres.", "goes on after"],
    ] as const
  ).map(([how, message, why]): Case => ({
    name: `judging + a ${how} <ask> → boundary: not a question, and the log says why`,
    from: machine(
      unclaimed(message, null, Buffer.from("Reply exactly: Here is my question <ask>Which database?</ask>\n")),
    ),
    input: NOTHING_CHECKED,
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => {
      assert.ok(!eventTypes(result).includes("needs_human"));
      const said = logLines(result).find((line) =>
        line.startsWith("an <ask> in the final message was not taken as a question"),
      );
      assert.ok(said?.includes(why), logLines(result).join("\n"));
    },
  })),
  {
    name: "judging + a failed iteration ending with <ask> → boundary as a failure, nobody asked",
    from: machine(unclaimed("<ask>Which database?</ask>", "exit 1")),
    input: NOTHING_CHECKED,
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => assert.ok(!eventTypes(result).includes("needs_human")),
  },
  {
    name: "needsHuman + signal → ended INTERRUPTED, the question still open",
    from: machine(needsHuman, {}, QUESTION),
    input: SIGINT,
    phase: "ended",
    effects: [],
    reason: "INTERRUPTED",
    check: (result) => assert.equal(statusOf(result.machine).question, "Which database?"),
  },
  {
    name: "needsHuman + failed write → ended FAILED",
    from: machine(needsHuman, {}, QUESTION),
    input: { type: "recordFailed", message: "disk full" },
    phase: "ended",
    effects: [],
    reason: "FAILED",
  },
  {
    name: "needsHuman + STOP → ended STOPPED",
    from: machine(needsHuman, {}, QUESTION),
    input: sentinel({ stop: true }),
    phase: "ended",
    effects: [],
    reason: "STOPPED",
  },
  {
    name: "needsHuman + stop --now → ended STOPPED",
    from: machine(needsHuman, {}, QUESTION),
    input: sentinel({ stop: true, stopNow: true }),
    phase: "ended",
    effects: [],
    reason: "STOPPED",
  },
  {
    name: "needsHuman + state.md active: false → ended STOPPED",
    from: machine(needsHuman, {}, QUESTION),
    input: desired({ active: false }),
    phase: "ended",
    effects: [],
    reason: "STOPPED",
  },
  {
    name: "needsHuman + --task marked done by the asking iteration → ended DONE, the question dropped (nobody waits for an answer no iteration would read)",
    from: machine(
      needsHuman,
      { tasks: TWO_TASKS(true), config: { ...machine(needsHuman).config, onlyTask: "US-2" } },
      QUESTION,
    ),
    input: clear(),
    phase: "ended",
    effects: ["record"],
    reason: "DONE",
    check: (result) => assert.equal(statusOf(result.machine).question ?? null, null),
  },
  {
    name: "needsHuman + --task not done → stays waiting",
    from: machine(
      needsHuman,
      { tasks: TWO_TASKS(false), config: { ...machine(needsHuman).config, onlyTask: "US-2" } },
      QUESTION,
    ),
    input: clear(),
    phase: "needsHuman",
    effects: [],
  },
  {
    name: "needsHuman + no answer yet → stays, no iteration",
    from: machine(needsHuman, {}, QUESTION),
    input: clear(),
    phase: "needsHuman",
    effects: [],
  },
  {
    name: "needsHuman + PAUSE → stays waiting (the pause is seen once answered)",
    from: machine(needsHuman, {}, QUESTION),
    input: sentinel({ pause: true }),
    phase: "needsHuman",
    effects: [],
  },
  {
    name: "needsHuman + a control file changed → look at the control files",
    from: machine(needsHuman, {}, QUESTION),
    input: { type: "control" },
    phase: "needsHuman",
    effects: ["look"],
  },
  {
    name: "needsHuman + an answer → boundary: answered published, ANSWER removed, the answer kept for the next prompt",
    from: machine(needsHuman, {}, QUESTION),
    input: { ...(clear() as object), answer: "Postgres" } as Input,
    phase: "boundary",
    effects: ["record", "clearAnswer", "look"],
    check: (result) => {
      assert.deepEqual(eventTypes(result), ["answered"]);
      assert.equal(result.machine.tally.answer, "Postgres");
      const status = statusOf(result.machine);
      assert.deepEqual([status.state, status.question, status.answer], ["running", "Which database?", "Postgres"]);
    },
  },
  {
    name: "boundary + clear after an answer → running: the prompt carries the question and the answer, which are then closed",
    from: machine(boundary, {}, { ...QUESTION, answer: "Postgres" }),
    input: clear(),
    phase: "running",
    effects: ["record", "clearAnswer", "spawn"],
    check: (result) => {
      const spawn = result.effects.find((effect) => effect.kind === "spawn");
      const prompt = spawn?.kind === "spawn" ? spawn.attempt.prompt.toString("utf8") : "";
      assert.match(
        prompt,
        /^Do the work\.\n\n## Your question and the answer\n\nYou asked: Which database\?\n\nAnswer: Postgres\n$/,
      );
      assert.deepEqual([result.machine.tally.question, result.machine.tally.answer], [null, null]);
    },
  },

  // reviewing (a `type: review` criterion)
  {
    name: "judging + promise and checks pass, a review configured → reviewing: the reviewer runs, nothing is recorded as done yet",
    from: machine(judging(), { plan: REVIEWED }),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "reviewing",
    effects: ["record", "review"],
    check: (result) => {
      assert.ok(!eventTypes(result).includes("iteration_ended"));
      const review = result.effects.find((effect) => effect.kind === "review");
      assert.deepEqual(review?.kind === "review" ? review.criteria.map((c) => c.check) : [], ["codex"]);
    },
  },
  {
    name: "judging + promise and checks pass, tasks open, a review configured → boundary: on to the next task, no review yet",
    from: machine(judging(), { plan: { ...REVIEWED, tasks: "prd.json" }, tasks: TWO_TASKS(false) }),
    input: { type: "checked", verdicts: [verdict(true)], fingerprint: null },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) =>
      assert.ok(
        logLines(result).some((line) =>
          line.startsWith("the promise was found, but 2 task(s) in prd.json are still open"),
        ),
        logLines(result).join("\n"),
      ),
  },
  {
    name: "judging + a check fails, a review configured → boundary without a review",
    from: machine(judging(), { plan: REVIEWED }),
    input: { type: "checked", verdicts: [verdict(false)], fingerprint: null },
    phase: "boundary",
    effects: ["record", "look"],
  },
  {
    name: "reviewing + approve → ended DONE, the reviewer's spend counted",
    from: machine(reviewing, { plan: REVIEWED }),
    input: { type: "reviewed", reviews: [reviewed("approve")] },
    phase: "ended",
    effects: ["record"],
    reason: "DONE",
    check: (result) => {
      assert.ok(Math.abs(result.machine.tally.costUsd - (0.1 + 0.25 + 0.05)) < 1e-9);
      assert.deepEqual(eventTypes(result).slice(0, 3), ["criteria_checked", "criteria_checked", "review_verdict"]);
      assert.equal(statusOf(result.machine).review?.verdict, "approve");
    },
  },
  {
    name: "reviewing + changes → boundary, the findings kept for the next prompt",
    from: machine(reviewing, { plan: REVIEWED }),
    input: { type: "reviewed", reviews: [reviewed("changes")] },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) => {
      assert.match(result.machine.tally.reviewFindings, /asked for changes[\s\S]*README\.md: add usage/);
      assert.equal(statusOf(result.machine).review?.verdict, "changes");
    },
  },
  {
    name: "reviewing + no verdict → boundary, not approved",
    from: machine(reviewing, { plan: REVIEWED }),
    input: { type: "reviewed", reviews: [{ ...reviewed("none"), reason: "the reviewer failed: timed out" }] },
    phase: "boundary",
    effects: ["record", "look"],
    check: (result) =>
      assert.match(result.machine.tally.reviewFindings, /did not approve: the reviewer failed: timed out/),
  },
  {
    name: "reviewing + signal → ending: the reviewer is ended, the iteration recorded unjudged",
    from: machine(reviewing, { plan: REVIEWED }),
    input: SIGINT,
    phase: "ending",
    effects: ["endTree"],
    reason: "INTERRUPTED",
  },
  {
    name: "reviewing + stop --now → ending STOPPED",
    from: machine(reviewing, { plan: REVIEWED }),
    input: sentinel({ stopNow: true }),
    phase: "ending",
    effects: ["endTree"],
    reason: "STOPPED",
  },
  {
    name: "reviewing + STOP → stays (the review finishes first)",
    from: machine(reviewing, { plan: REVIEWED }),
    input: sentinel({ stop: true }),
    phase: "reviewing",
    effects: [],
  },
  {
    name: "ending (judged) + reviewed → ended, the reviewer's spend counted",
    from: machine(
      {
        id: "ending",
        ending: { reason: "INTERRUPTED", detail: "received SIGINT", signal: "SIGINT" },
        attempt: ATTEMPT,
        judged: finished("<promise>DONE</promise>"),
      },
      { plan: REVIEWED },
    ),
    input: { type: "reviewed", reviews: [reviewed("none")] },
    phase: "ended",
    effects: ["record"],
    reason: "INTERRUPTED",
    check: (result) => assert.ok(Math.abs(result.machine.tally.costUsd - 0.4) < 1e-9),
  },
  {
    name: "boundary + every task done, but the last review asked for changes → running, not NO_WORK",
    from: machine(
      boundary,
      { tasks: ALL_DONE, plan: { ...REVIEWED, tasks: "TASKS.md" } },
      { review: { iteration: 1, verdict: "changes", detail: "x" }, reviewFindings: "fix it" },
    ),
    input: clear(),
    phase: "running",
    effects: ["record", "spawn"],
    check: (result) => {
      const spawn = result.effects.find((effect) => effect.kind === "spawn");
      assert.match(
        spawn?.kind === "spawn" ? spawn.attempt.prompt.toString("utf8") : "",
        /## Review of your last iteration\n\nfix it/,
      );
    },
  },

  {
    name: "boundary + every task done by an iteration no review saw (failed, no claim) → running, not NO_WORK",
    from: machine(
      boundary,
      { tasks: ALL_DONE, plan: { ...REVIEWED, tasks: "TASKS.md" } },
      { iteration: 1, review: null },
    ),
    input: clear(),
    phase: "running",
    effects: ["record", "spawn"],
  },
  {
    name: "boundary + every task done before any iteration, a review configured → ended NO_WORK (nothing to review)",
    from: machine(
      boundary,
      { tasks: ALL_DONE, plan: { ...plan({ completionCriteria: [REVIEW] }), tasks: "TASKS.md" } },
      { iteration: 0, review: null },
    ),
    input: clear(),
    phase: "ended",
    effects: [],
    reason: "NO_WORK",
  },
  {
    name: "reviewing + approve from one of two reviewers (the other never answered) → boundary, not DONE",
    from: machine(reviewing, { plan: plan({ completionCriteria: [REVIEW, { ...REVIEW, check: "second" }] }) }),
    input: { type: "reviewed", reviews: [reviewed("approve")] },
    phase: "boundary",
    effects: ["record", "look"],
  },

  // ended
  {
    name: "ended + anything → stays ended",
    from: machine({ id: "ended", ending: { reason: "DONE", detail: "x" } }),
    input: SIGINT,
    phase: "ended",
    effects: [],
    reason: "DONE",
  },
];

describe("step: every transition", () => {
  for (const c of CASES) {
    test(c.name, () => {
      const result = step(c.from, c.input);
      assert.equal(result.machine.phase.id, c.phase);
      assert.deepEqual(kinds(result.effects), c.effects);
      if (c.reason) assert.equal(endingOf(result)?.reason, c.reason);
      c.check?.(result);
    });
  }

  test("the table covers every phase as a starting point", () => {
    const covered = new Set(CASES.map((c) => c.from.phase.id));
    assert.deepEqual([...covered].sort(), [
      "boundary",
      "ended",
      "ending",
      "judging",
      "needsHuman",
      "paused",
      "reviewing",
      "running",
      "verifying",
      "waitingLimit",
    ]);
  });

  test("step is pure: the machine it was given is not changed", () => {
    const from = machine(judging());
    const before = JSON.stringify(from);
    step(from, { type: "checked", verdicts: [verdict(false)], fingerprint: null });
    assert.equal(JSON.stringify(from), before);
  });
});

describe("the diagram at the top of the engine", () => {
  const source = readFileSync(fileURLToPath(new URL("../../../src/engine/step.ts", import.meta.url)), "utf8");
  const phaseSource = readFileSync(fileURLToPath(new URL("../../../src/engine/phase.ts", import.meta.url)), "utf8");
  const diagram = source.slice(0, source.indexOf("import "));
  const phaseIds = [...phaseSource.matchAll(/\{\s*id: "(\w+)"/g)].map((match) => match[1]);

  test("names every phase of the union, and no other", () => {
    assert.ok(phaseIds.length >= 7, `phases found: ${phaseIds.join(", ")}`);
    const drawn = new Set([...diagram.matchAll(/\[(\w+)\]/g)].map((match) => match[1]));
    assert.deepEqual([...drawn].sort(), [...new Set(phaseIds)].sort());
  });

  test("every phase has its own case in step", () => {
    for (const id of phaseIds) assert.match(source, new RegExp(`case "${id}":`), id);
  });
});
