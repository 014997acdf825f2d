// Why an iteration failed is shown: a failed iteration's line is followed by the last lines of the agent's
// stderr, and --live, `ralph logs` and `ralph logs --iteration N` show stderr marked, in the order written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { onlyRunDir, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-agent-stderr-");

test("an agent that cannot start: its iteration line says why (sh: cannot open …)", async () => {
  const dir = project();
  const result = await runRalph(["run", "-n", "1", "go", "--", "sh", "agent.sh"], dir);
  assert.equal(result.code, 3, result.stderr);
  const lines = result.stdout.split("\n");
  const failed = lines.findIndex((line) => /^\[1\/1\] [\d.]+s failed \(exit 2 without a result\)/.test(line));
  assert.ok(failed !== -1, result.stdout);
  assert.match(lines[failed + 1] ?? "", /^ {2}stderr: sh: .*agent\.sh/);
});

/**
 * An agent writing to stdout and stderr by turns; each line waits until ralph has recorded it as an event, so the order
 * ralph saw is the order written.
 */
function turnTaker(dir: string): string[] {
  writeFileSync(
    join(dir, "turns.sh"),
    [
      'say() { echo "$1" >&"$2"; n=0; until grep -q "$1" "$RALPH_RUN_DIR/events.jsonl" 2>/dev/null; do n=$((n+1)); [ $n -gt 500 ] && exit 9; sleep 0.01; done; }',
      "say out-one 1",
      "say err-one 2",
      "say out-two 1",
      "say err-two 2",
      "exit 1",
      "",
    ].join("\n"),
  );
  return ["--", "sh", "turns.sh"];
}

/** The lines naming the four writes, in the order they appear. */
function turns(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => /(out|err)-(one|two)/.test(line) && !/failed/.test(line))
    .map((line) => line.trim());
}

const ORDER = ["out-one", "stderr: err-one", "out-two", "stderr: err-two"];

test("--live, ralph logs and logs --iteration interleave stderr in the order written, marked", async () => {
  const dir = project();
  const live = await runRalph(
    ["run", "--name", "turns", "-n", "1", "--same-failure-limit", "0", "--live", "go", ...turnTaker(dir)],
    dir,
  );
  assert.equal(live.code, 3, live.stderr);
  // --live: the four writes in order, then the failed line with the stderr's last lines under it.
  assert.deepEqual(turns(live.stdout).slice(0, 4), ORDER, live.stdout);
  assert.match(live.stdout, /failed \(exit 1[^)]*\)[^\n]*\n {2}stderr: err-one\n {2}stderr: err-two/);
  const logs = await runRalph(["logs", "turns"], dir);
  assert.equal(logs.code, 0, logs.stderr);
  assert.deepEqual(turns(logs.stdout).slice(0, 4), ORDER, logs.stdout);
  const one = await runRalph(["logs", "turns", "--iteration", "1"], dir);
  assert.equal(one.code, 0, one.stderr);
  assert.deepEqual(turns(one.stdout), ORDER, one.stdout);
  assert.ok(onlyRunDir(dir).endsWith("turns"));
});
