// The one mapping of a failure to its line and exit code: every kind the launch layer and the commands fail with.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sayFailure } from "../../src/cli/failure-exit.js";
import { UsageError } from "../../src/cli/usage-error.js";
import { LaunchFailure } from "../../src/launch/launch-failure.js";
import { RunFileError } from "../../src/store/regular-file.js";

const errno = (code: string, path?: string) =>
  Object.assign(new Error(`${code}: failed`), { code, ...(path ? { path } : {}) });

test("each failure's line and exit code: bad input 2, a full disk 1, a bug of ralph's 1", () => {
  const cases: Array<[unknown, number, string | RegExp, boolean]> = [
    [new LaunchFailure({ kind: "refused", message: "--tasks x: not in HEAD" }), 2, "--tasks x: not in HEAD", true],
    [
      new LaunchFailure({ kind: "worktree", flag: "--worktree", failure: { kind: "no-commit", top: "/repo" } }),
      2,
      "--worktree: the repository at /repo has no commit yet; a worktree starts from HEAD, so make a first commit",
      true,
    ],
    [
      new LaunchFailure({
        kind: "preflight",
        problem: { kind: "check-missing", check: "pytest -q", program: "pytest" },
      }),
      2,
      'preflight: check "pytest -q" runs pytest, which is not on PATH; install it or change the check (--preflight off skips these checks)',
      true,
    ],
    [
      new LaunchFailure({ kind: "preflight", problem: { kind: "agent-missing", agent: "codex", program: "codex" } }),
      2,
      /^preflight: the codex agent's program codex was not found; install it \(npm install -g @openai\/codex/,
      true,
    ],
    [
      new LaunchFailure({ kind: "opening", problem: { kind: "project-busy", runId: "r1", pid: null } }),
      2,
      "another run is active in this project (r1, pid ?); stop it, or give --name to run several",
      true,
    ],
    [
      new LaunchFailure({ kind: "opening", problem: { kind: "run-exists", runId: "r1" } }),
      2,
      "--name r1: a run with this id already exists (use ralph continue r1)",
      true,
    ],
    [
      new LaunchFailure({ kind: "opening", problem: { kind: "run-driven", runId: "r1", pid: 42 } }),
      2,
      "run r1 is being driven by another runner (pid 42)",
      true,
    ],
    [
      new LaunchFailure({
        kind: "opening",
        problem: { kind: "not-writable", what: "the run directory of r1", code: "EACCES" },
      }),
      2,
      "cannot create the run directory of r1 (EACCES): the project must be writable",
      true,
    ],
    [new UsageError("--max-cost x: expected an amount"), 2, "--max-cost x: expected an amount", true],
    [new RunFileError("status.json is a link"), 2, "status.json is a link", true],
    [errno("ENOSPC"), 1, "disk full: ENOSPC: failed", false],
    [
      errno("EROFS", "/ro/project/.ralph"),
      2,
      "cannot write /ro/project/.ralph (EROFS: the file system is read-only): ralph needs a writable project directory",
      false,
    ],
    [new Error("boom"), 1, /^internal error: Error: boom\n\s+at /, false],
  ];
  for (const [error, code, line, input] of cases) {
    const said = sayFailure(error);
    assert.equal(said.code, code, String(error));
    assert.equal(said.input, input, String(error));
    if (typeof line === "string") assert.equal(said.line, line);
    else assert.match(said.line, line);
  }
  // Without the stack (a child's stderr, the entry file's last resort): the message alone.
  assert.equal(sayFailure(new Error("boom"), false).line, "internal error: boom");
});
