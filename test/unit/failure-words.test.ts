// The same-failure guard names a failure by its first error line, not by the last line of the output: after a
// crash that is the runtime's version (`Node.js v20.20.2`), which says nothing and is the same for every crash.
import { test } from "node:test";
import assert from "node:assert/strict";
import { failureKey } from "../../src/engine/guards.js";
import type { CriterionVerdict } from "../../src/judge/criteria.js";

const NODE_CRASH = [
  "/work/app/check.js:3",
  '  throw new Error("expected 2 pages, got 3");',
  "  ^",
  "",
  "Error: expected 2 pages, got 3",
  "    at Object.<anonymous> (/work/app/check.js:3:9)",
  "    at Module._compile (node:internal/modules/cjs/loader:1554:14)",
  "",
  "Node.js v20.20.2",
  "",
].join("\n");

function failedCheck(outputTail: string): CriterionVerdict {
  return {
    type: "command",
    check: "node check.js",
    passed: false,
    detail: "exit 1",
    outputTail,
    durationMs: 5,
    exitCode: 1,
  };
}

test("a crashed check is named by its error line, not by Node's version after it", () => {
  assert.equal(
    failureKey(null, [failedCheck(NODE_CRASH)])?.what,
    "check `node check.js` exit 1 (Error: expected 2 pages, got 3)",
  );
});

test("test runners' failure lines are found before the summary at the end", () => {
  const pytest = "collected 3 items\n\ntest_a.py ..F\nE   assert 2 == 3\n\n1 failed, 2 passed in 0.05s\n";
  assert.match(failureKey(null, [failedCheck(pytest)])?.what ?? "", /\(E {3}assert 2 == 3\)$/);
  const tap = "ok 1 - adds\nnot ok 2 - subtracts\n# tests 2\n# fail 1\n";
  assert.match(failureKey(null, [failedCheck(tap)])?.what ?? "", /\(not ok 2 - subtracts\)$/);
});

test("control: output with no error line is still named by its last line", () => {
  assert.match(
    failureKey(null, [failedCheck("checking pages\n3 pages, want 2\n")])?.what ?? "",
    /\(3 pages, want 2\)$/,
  );
});

test("a failed agent is named with the first error line of its stderr", () => {
  const stderr =
    "loading config\nError: cannot reach the model at http://127.0.0.1:9\n    at connect (agent.js:1:1)\nNode.js v20.20.2\n";
  assert.equal(
    failureKey("exit 1 without a result", [], stderr)?.what,
    "the agent failed: exit 1 without a result (Error: cannot reach the model at http://127.0.0.1:9)",
  );
  assert.equal(failureKey("exit 1 without a result", [], "")?.what, "the agent failed: exit 1 without a result");
});
