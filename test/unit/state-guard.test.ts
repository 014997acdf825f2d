// StateGuard and `ralph set` parsing: what an edit during an iteration may change, and what a person may set.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyStateChanges, parseStateChanges, SET_KEYS } from "../../src/config/state-changes.js";
import { RUN_OPTION_SPECS, runOption } from "../../src/config/run-options.js";
import { renderPlan, type Plan } from "../../src/store/plan-file.js";
import { StateGuard, tightenOnly } from "../../src/store/state-guard.js";

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const base: Plan = {
  active: true,
  maxIterations: 5,
  completionPromise: "DONE",
  completionCriteria: [{ type: "command", check: "false" }],
  tasks: null,
  prompt: Buffer.from("go\n"),
};

describe("tightenOnly", () => {
  test("applies active: false and a lower cap; ignores everything that loosens or changes the rules", () => {
    const proposed: Plan = {
      ...base,
      active: false,
      maxIterations: 2,
      completionPromise: null,
      completionCriteria: [],
      tasks: "x.md",
      prompt: Buffer.from("other"),
    };
    const { state, applied, ignored } = tightenOnly(base, proposed);
    assert.deepEqual(applied, ["active: false", "max_iterations 5 -> 2"]);
    assert.deepEqual(ignored, ["completion_promise", "completion_criteria", "tasks", "prompt"]);
    assert.deepEqual(state, { ...base, active: false, maxIterations: 2 });
  });

  test("a cap of 0 (unlimited) or a higher cap is a loosening; a cap below unlimited is a tightening", () => {
    assert.deepEqual(tightenOnly(base, { ...base, maxIterations: 0 }).ignored, ["max_iterations 5 -> 0"]);
    assert.deepEqual(tightenOnly(base, { ...base, maxIterations: 9 }).ignored, ["max_iterations 5 -> 9"]);
    assert.deepEqual(tightenOnly({ ...base, maxIterations: 0 }, { ...base, maxIterations: 4 }).applied, [
      "max_iterations 0 -> 4",
    ]);
    assert.deepEqual(tightenOnly({ ...base, active: false }, base).ignored, ["active: true"]);
  });
});

describe("StateGuard", () => {
  function guarded(): { file: string; guard: StateGuard } {
    const dir = mkdtempSync(join(tmpdir(), "ralph-guard-"));
    dirs.push(dir);
    const file = join(dir, "state.md");
    writeFileSync(file, renderPlan(base));
    return { file, guard: new StateGuard(file, base) };
  }

  test("a change seen after an iteration is put back and kept aside; one seen at a boundary is accepted", () => {
    const { file, guard } = guarded();
    assert.equal(guard.afterIteration(1), null, "no change, nothing to report");
    const loosened = readFileSync(file, "utf8").replace('check: "false"', 'check: "true"');
    writeFileSync(file, loosened);
    assert.deepEqual(guard.afterIteration(2)?.ignored, ["completion_criteria"]);
    assert.deepEqual(readFileSync(file), renderPlan(base));
    assert.equal(readFileSync(`${file}.rejected-002`, "utf8"), loosened);
    assert.equal(guard.atBoundary().kind, "same");
    writeFileSync(file, loosened);
    const read = guard.atBoundary();
    assert.equal(read.kind, "changed");
    assert.equal(guard.state.completionCriteria[0]?.check, "true");
    assert.equal(guard.afterIteration(3), null, "an accepted edit is not reported again");
  });

  test("a broken file at a boundary keeps the last good state and is not taken for an agent's edit later", () => {
    const { file, guard } = guarded();
    writeFileSync(file, "no front matter");
    assert.equal(guard.atBoundary().kind, "broken");
    assert.equal(guard.state.maxIterations, 5);
    assert.equal(guard.afterIteration(1), null);
  });
});

describe("parseStateChanges", () => {
  test("reads each key with the flag's rules", () => {
    const parsed = parseStateChanges([
      "active=false",
      "max_iterations=08",
      "completion_promise=",
      "check=npm test",
      "check=make lint",
      "tasks=TASKS.md",
    ]);
    assert.deepEqual(parsed, {
      ok: true,
      changes: {
        active: false,
        maxIterations: 8,
        completionPromise: null,
        completionCriteria: [
          { type: "command", check: "npm test" },
          { type: "command", check: "make lint" },
        ],
        tasks: "TASKS.md",
      },
    });
    assert.deepEqual(parseStateChanges(["check="]), { ok: true, changes: { completionCriteria: [] } });
  });

  test("check= replaces the checks; a review criterion (from ralph.yaml) stays", () => {
    const review = {
      type: "review",
      check: "codex",
      review: { agent: "codex" as const, model: null, prompt: null, command: null, timeoutMs: 600_000 },
    };
    const state = {
      active: true,
      maxIterations: 3,
      completionPromise: null,
      completionCriteria: [{ type: "command", check: "old" }, review],
      tasks: null,
      prompt: Buffer.from("x"),
    };
    const parsed = parseStateChanges(["check=npm test"]);
    assert.ok(parsed.ok);
    assert.deepEqual(applyStateChanges(state, parsed.changes).completionCriteria, [
      { type: "command", check: "npm test" },
      review,
    ]);
    assert.deepEqual(applyStateChanges(state, { maxIterations: 4 }).completionCriteria, state.completionCriteria);
  });

  test("refuses unknown keys, bad values and words without '='", () => {
    for (const words of [
      ["max_iterations=1e1"],
      ["max_iterations=-1"],
      ["active=maybe"],
      ["active="],
      ["prompt=x"],
      ["max_iterations"],
      [],
    ]) {
      assert.equal(parseStateChanges(words).ok, false, words.join(" "));
    }
  });

  test("its keys are the declared options' ralph.yaml keys, each read by that option's parser", () => {
    const yamlKeys = new Set(RUN_OPTION_SPECS.map((spec) => spec.yaml));
    assert.deepEqual(
      SET_KEYS.filter((key) => !yamlKeys.has(key)),
      ["active"],
      "a ralph set key that is not a declared ralph.yaml key",
    );
    // The same value refused for the same reason as the flag: -n's parser words max_iterations='s refusal.
    for (const [key, value] of [
      ["maxIterations", "1e1"],
      ["maxIterations", "-1"],
      ["tasks", ""],
    ] as const) {
      const spec = runOption(key);
      const parsed = spec.parse(value);
      assert.ok(!parsed.ok);
      const said = parseStateChanges([`${spec.yaml}=${value}`]);
      if (value === "") assert.ok(said.ok, "an empty tasks= removes the task list");
      else
        assert.deepEqual(said, {
          ok: false,
          message: `${spec.yaml}=${value}: expected ${spec.yaml}=N, ${parsed.expected}`,
        });
    }
  });

  test("a misspelt key gets the key it was probably meant to be", () => {
    const said = (words: string[]) => {
      const parsed = parseStateChanges(words);
      return parsed.ok ? "" : parsed.message;
    };
    assert.equal(
      said(["max_iteration=4"]),
      "max_iteration=4: unknown key max_iteration (did you mean max_iterations?)",
    );
    assert.equal(
      said(["max-iterations=4"]),
      "max-iterations=4: unknown key max-iterations (did you mean max_iterations?)",
    );
    // Known-false control: nothing near, so the keys are listed.
    assert.equal(
      said(["prompt=x"]),
      "prompt=x: expected one of the keys active, max_iterations, completion_promise, check, tasks",
    );
  });
});
