// ralph's own files and the agent's program stay runnable when they sit under a directory the sandbox
// replaces with a private one (a clone or an install under /tmp).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapOptions } from "../../src/sandbox/bwrap-argv.js";

function walls(programs: string[]) {
  const work = mkdtempSync(join(tmpdir(), "ralph-walls-"));
  return {
    workDir: work,
    projectDir: work,
    home: work,
    writeAllow: [],
    agentState: { writable: [], readOnly: [] },
    readDeny: [],
    socket: null,
    programs,
  };
}

/** The paths bound read-only, in order. */
function readOnlyBinds(options: string[]): string[] {
  return options.flatMap((option, index) => (option === "--ro-bind" ? [options[index + 1] as string] : []));
}

test("a program under the private /tmp is bound back read-only after /tmp is replaced; one elsewhere is not bound", () => {
  const dir = realpathSync(mkdtempSync("/tmp/ralph-program-"));
  const program = join(dir, "agent.sh");
  writeFileSync(program, "#!/bin/sh\n");
  const options = bwrapOptions(walls([dir, program, "/usr/bin"]));
  const binds = readOnlyBinds(options);
  assert.ok(binds.includes(dir) && binds.includes(program), JSON.stringify(binds));
  assert.ok(options.indexOf(dir) > options.indexOf("/tmp"), "bound after the private /tmp, so it is not hidden again");
  // Known-false control: /usr/bin is already visible through the read-only root, so it is not bound again.
  assert.ok(!binds.includes("/usr/bin"));
  assert.deepEqual(
    readOnlyBinds(bwrapOptions(walls([]))).filter((path) => path.startsWith(dir)),
    [],
  );
});

test("a reviewer's walls mount the work directory read-only, and no write_allow path inside it writable", () => {
  const base = walls([]);
  const work = realpathSync(base.workDir);
  const inside = join(work, "cache");
  mkdirSync(inside);
  const binds = (options: string[]) =>
    options.flatMap((option, index) => (option === "--bind" ? [options[index + 1] as string] : []));
  const agent = bwrapOptions({ ...base, writeAllow: [inside] });
  const reviewer = bwrapOptions({ ...base, writeAllow: [inside], readOnlyWork: true });
  // Control: the agent's own walls bind both writable.
  assert.deepEqual(binds(agent), [work, inside]);
  assert.deepEqual(binds(reviewer), []);
  assert.ok(readOnlyBinds(reviewer).includes(work));
});

test("a reviewer that starts outside the work tree (in HOME) is started there inside the sandbox; the agent starts in the tree", () => {
  const base = walls([]);
  const work = realpathSync(base.workDir);
  const chdir = (options: string[]) => options[options.lastIndexOf("--chdir") + 1];
  assert.equal(chdir(bwrapOptions({ ...base, readOnlyWork: true })), work);
  assert.equal(chdir(bwrapOptions({ ...base, readOnlyWork: true, startDir: "/home/someone" })), "/home/someone");
});
