// ralph.yaml's values follow the same rules as the flags that override them: a bad value is refused even
// when a flag overrides it, and max_iterations takes only whole numbers, as -n does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertOneLineUsageError, fakeAgent, readStatus, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-yaml-");

test("a bad value in ralph.yaml is refused even when a flag overrides it", async () => {
  const dir = project();
  writeFileSync(join(dir, "ralph.yaml"), "max_iterations: ten\n");
  assertOneLineUsageError(
    await runRalph(["run", "-n", "1", "--dry-run", "go"], dir),
    /ralph\.yaml: line 1: max_iterations: expected a whole number .*got "ten"/,
  );
});

test("max_iterations in ralph.yaml follows the flag's rule: 1e1, 0x2 and 2.0 are refused, 2 is taken", async () => {
  const dir = project();
  for (const value of ["1e1", "0x2", "2.0"]) {
    writeFileSync(join(dir, "ralph.yaml"), `agent: command\nmax_iterations: ${value}\n`);
    assertOneLineUsageError(
      await runRalph(["run", "--dry-run", "go"], dir),
      new RegExp(`ralph\\.yaml: line 2: max_iterations: expected a whole number .*, got "${value}"`),
    );
    assertOneLineUsageError(
      await runRalph(["run", "-n", value, "--dry-run", "go"], dir),
      /--max-iterations: expected a whole number/,
    );
  }
  writeFileSync(join(dir, "ralph.yaml"), "max_iterations: 2\n");
  const taken = await runRalph(["run", "--name", "ok", "--dry-run", "--dry-run-delay", "0", "go", ...fakeAgent()], dir);
  assert.equal(taken.code, 0, taken.stderr);
  assert.equal(readStatus(join(dir, ".ralph", "runs", "ok")).max_iterations, 2);
});
