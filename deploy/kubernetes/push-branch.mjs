#!/usr/bin/env node
// ralph's notification command in a pod: after an iteration and at the end, pushes the run's branch
// ralph/<run> to `origin`, so the work survives the pod and a replacement pod goes on from it.
// Reads the event JSON on stdin; runs git with argv arrays and the repository's hooks off.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const event = JSON.parse(readFileSync(0, "utf8"));
if (event.type !== "iteration_ended" && event.type !== "run_ended") process.exit(0);
if (typeof event.run !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(event.run)) {
  process.stderr.write(`push-branch: expected a run id in the event, got ${JSON.stringify(event.run)}\n`);
  process.exit(2);
}
const ref = `refs/heads/ralph/${event.run}`;
const git = (...args) => execFileSync("git", ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
const tip = git("rev-parse", "--verify", `${ref}^{commit}`);
const base = process.env.RALPH_POD_BASE;
// Nothing beyond the commit the pod started from (a task already done, an iteration that changed nothing).
if (base && (tip === base || isAncestor(tip, base))) process.exit(0);
// To RALPH_REMOTE as the pod was given it, not to whatever the clone's config (which the agent can edit) says.
git("push", "--quiet", process.env.RALPH_REMOTE || "origin", `${ref}:${ref}`);

function isAncestor(commit, of) {
  try {
    git("merge-base", "--is-ancestor", commit, of);
    return true;
  } catch {
    return false;
  }
}
