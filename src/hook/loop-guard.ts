// Keeps the in-session loop file the person's: an edit made during the session can only tighten the loop.
//
// Every write ralph makes to `.claude/ralph-loop.local.md` (`ralph hook start`, the hook's own patches,
// `ralph hook cancel`) is copied beside the runner's records, out of the project. At a stop, a file that
// differs from that copy was edited during the session (by the agent, or its tools): its tightenings are
// applied (active: false, a lower non-zero max_iterations, added checks), anything else is refused, the file
// is put back to the rules in force, and the stop says so in one line. `ralph hook start` changes the rules.
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { writeFileAtomic } from "../store/atomic-write.js";
import { tightenRules } from "../store/state-guard.js";
import { parseHookLoop, renderHookLoop, type HookLoop } from "./hook-loop-file.js";
import { trustedLoopCopy, trustLoopFile } from "./loop-trust.js";

/** The parts of `proposed` that only tighten `trusted`; the rest is kept from `trusted`, and named. */
export function tightenLoop(
  trusted: HookLoop,
  proposed: HookLoop,
): { loop: HookLoop; ignored: string[]; applied: string[] } {
  const { rules: loop, applied, ignored } = tightenRules(trusted, proposed);
  const had = trusted.completionCriteria.map((criterion) => JSON.stringify(criterion));
  const has = proposed.completionCriteria.map((criterion) => JSON.stringify(criterion));
  if (had.join("\n") !== has.join("\n")) {
    if (had.every((criterion) => has.includes(criterion))) {
      loop.completionCriteria = proposed.completionCriteria;
      applied.push("completion_criteria (checks added)");
    } else ignored.push("completion_criteria");
  }
  if (proposed.completionPromise !== trusted.completionPromise) ignored.push("completion_promise");
  if (proposed.iteration !== trusted.iteration) ignored.push("iteration");
  if (
    proposed.sessionId !== trusted.sessionId ||
    proposed.runId !== trusted.runId ||
    proposed.startedAt !== trusted.startedAt
  )
    ignored.push("session_id/run_id/started_at");
  if (proposed.prompt !== trusted.prompt) ignored.push("prompt");
  return { loop, ignored, applied };
}

/**
 * At a stop: a loop file that differs from ralph's copy keeps only its tightenings and is put back; returns
 * the line that tells the person what was refused, or null. A file ralph has no copy of, or one that cannot be
 * read as a loop (which ends the loop FAILED anyway), is left as it is.
 */
export function guardLoopFile(loopFile: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const copy = trustedLoopCopy(loopFile, env);
  if (!existsSync(copy) || !existsSync(loopFile)) return null;
  let trustedBytes: Buffer;
  let proposedBytes: Buffer;
  try {
    trustedBytes = readFileSync(copy);
    proposedBytes = readFileSync(loopFile);
  } catch {
    return null;
  }
  if (trustedBytes.equals(proposedBytes)) return null;
  const trusted = parseHookLoop(copy, trustedBytes.toString("utf8"));
  const proposed = parseHookLoop(loopFile, proposedBytes.toString("utf8"));
  if (trusted.kind !== "ok" || proposed.kind !== "ok") return null;
  const { loop, ignored } = tightenLoop(trusted.loop, proposed.loop);
  if (ignored.length === 0) {
    // The bytes judged are the ones trusted, whatever is in the file by now.
    trustLoopFile(loopFile, proposedBytes, env);
    return null;
  }
  const text = renderHookLoop(loop);
  writeFileAtomic(loopFile, text);
  trustLoopFile(loopFile, text, env);
  return `ralph: an edit to ${basename(loopFile)} made during the session was refused (${ignored.join(", ")}): it would loosen the loop, which goes on with its rules; change them with ralph hook start`;
}
