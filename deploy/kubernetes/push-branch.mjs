#!/usr/bin/env node
// ralph's notification command in a pod: after an iteration and at the end, pushes the run's branch
// ralph/<run> to `origin`, so the work survives the pod and a replacement pod goes on from it.
// Reads the event JSON on stdin; runs git with argv arrays, the repository's hooks off, and pushes from a
// git directory of its own.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const event = JSON.parse(readFileSync(0, "utf8"));
if (event.type !== "iteration_ended" && event.type !== "run_ended") process.exit(0);
if (typeof event.run !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(event.run)) {
  process.stderr.write(`push-branch: expected a run id in the event, got ${JSON.stringify(event.run)}\n`);
  process.exit(2);
}
const ref = `refs/heads/ralph/${event.run}`;
const git = (...args) =>
  execFileSync("git", ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
const tip = git("rev-parse", "--verify", `${ref}^{commit}`);
const base = process.env.RALPH_POD_BASE;
// Nothing beyond the commit the pod started from (a task already done, an iteration that changed nothing).
if (base && (tip === base || isAncestor(tip, base))) process.exit(0);
// To RALPH_REMOTE as the pod was given it, never through the clone's config (which the agent can edit): the push
// runs in a git directory of its own that borrows only the clone's objects, with no system or user config, and
// only the https, ssh, git and file transports (the pod's credential helper comes in its environment).
const remote = process.env.RALPH_REMOTE;
if (!remote) {
  process.stderr.write("push-branch: RALPH_REMOTE is not set; it names the remote to push to\n");
  process.exit(2);
}
const objects = resolve(git("rev-parse", "--git-common-dir"), "objects");
const fresh = mkdtempSync(join(tmpdir(), "push-branch-"));
try {
  execFileSync("git", ["init", "--quiet", "--bare", fresh], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
  writeFileSync(join(fresh, "objects", "info", "alternates"), `${objects}\n`);
  execFileSync("git", ["--git-dir", fresh, "push", "--quiet", remote, `${tip}:${ref}`], {
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      ...process.env,
      GIT_DIR: fresh,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_ALLOW_PROTOCOL: "https:ssh:git:file",
      GIT_TERMINAL_PROMPT: "0",
    },
  });
} finally {
  rmSync(fresh, { recursive: true, force: true });
}

function isAncestor(commit, of) {
  try {
    git("merge-base", "--is-ancestor", commit, of);
    return true;
  } catch {
    return false;
  }
}
