// --task-index: a task id made into a run id and branch name git accepts, and the picking rules.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runIdForTask, pickTaskByIndex } from "../../src/launch/task-index.js";
import { defaultSettings } from "../../src/config/run-options.js";
import { parseRunId } from "../../src/util/parse-value.js";
import { LaunchFailure } from "../../src/launch/launch-failure.js";

describe("runIdForTask", () => {
  const cases: Array<[string, string]> = [
    ["US-001", "US-001"],
    ["US 1/a..b", "US-1-a.b"],
    ["12", "12"],
    ["-lead", "lead"],
    [".hidden", "hidden"],
    ["x.lock", "x"],
    ["end.", "end"],
    ["ünïcode tâsk", "n-code-t-sk"],
    ["///", "task-4"],
    ["a".repeat(200), "a".repeat(128)],
  ];
  for (const [id, expected] of cases) {
    test(`${JSON.stringify(id.length > 20 ? `${id.slice(0, 12)}…` : id)} → ${expected.length > 20 ? `${expected.slice(0, 12)}…` : expected}`, () => {
      const runId = runIdForTask({ id }, 4);
      assert.equal(runId, expected);
      assert.equal(parseRunId(runId).ok, true);
      // git itself is the judge of a branch name.
      execFileSync("git", ["check-ref-format", `refs/heads/ralph/${runId}`]);
    });
  }
});

describe("pickTaskByIndex", () => {
  const dir = mkdtempSync(join(tmpdir(), "ralph-task-index-"));
  writeFileSync(
    join(dir, "prd.json"),
    JSON.stringify({
      userStories: [
        { id: "A", title: "a", passes: true },
        { id: "B", title: "b" },
        { id: "C", title: "c", priority: 0 },
      ],
    }),
  );
  const settings = (patch: Partial<ReturnType<typeof defaultSettings>>) => ({
    ...defaultSettings(),
    tasks: "prd.json",
    ...patch,
  });
  const refused = (patch: Partial<ReturnType<typeof defaultSettings>>, env: NodeJS.ProcessEnv, message: RegExp) =>
    assert.throws(
      () => pickTaskByIndex(settings(patch), dir, env),
      (error: unknown) => error instanceof LaunchFailure && message.test(error.message),
    );

  test("file order, not priority and not the others' state: index 0 is the done task A, index 2 is C", () => {
    assert.deepEqual(
      [0, 1, 2].map((taskIndex) => pickTaskByIndex(settings({ taskIndex }), dir, {})).map((s) => [s.task, s.name]),
      [
        ["A", "A"],
        ["B", "B"],
        ["C", "C"],
      ],
    );
  });
  test("job reads JOB_COMPLETION_INDEX; --name wins over the task's name", () => {
    const picked = pickTaskByIndex(settings({ taskIndex: "job", name: "mine" }), dir, { JOB_COMPLETION_INDEX: "1" });
    assert.deepEqual([picked.task, picked.name], ["B", "mine"]);
  });
  test("without --task-index nothing changes", () => {
    assert.deepEqual(pickTaskByIndex(settings({}), dir, { JOB_COMPLETION_INDEX: "1" }), settings({}));
  });
  test("usage errors: out of range, job without or with a bad variable, or no --tasks (with --task or --parallel: test/unit/check-settings)", () => {
    refused({ taskIndex: 3 }, {}, /^--task-index 3: expected 0 to 2, the positions of the 3 task\(s\) in prd\.json$/);
    refused({ taskIndex: "job" }, {}, /JOB_COMPLETION_INDEX to be set/);
    refused(
      { taskIndex: "job" },
      { JOB_COMPLETION_INDEX: "-1" },
      /JOB_COMPLETION_INDEX to be a whole number .*got "-1"/,
    );
    refused({ taskIndex: "job" }, { JOB_COMPLETION_INDEX: "7" }, /^--task-index 7: expected 0 to 2/);
    refused({ taskIndex: 0, tasks: null }, {}, /--task-index needs --tasks FILE/);
    refused({ taskIndex: 0, tasks: "missing.json" }, {}, /^--tasks missing\.json: does not exist$/);
  });
});
