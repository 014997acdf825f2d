// The run page's buttons: the same control files as `ralph stop`, `pause` and `resume`, the same answer as
// `ralph answer`, and `ralph continue` started as a detached process of its own.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runOption } from "../config/run-options.js";
import { isRunnerAlive } from "../control/runner-alive.js";
import { answerRun } from "../control/answer-run.js";
import { summariseRun } from "../control/list-runs.js";
import { requestControl } from "../control/control-request.js";
import type { RunRef } from "./projects.js";
import { RALPH_MAIN } from "../process/ralph-entry.js";

/** What a button asks for. */
export type Action = "pause" | "resume" | "stop" | "stop-now" | "continue" | "answer";

/** A button's outcome: an HTTP status and a message for the page. */
export interface ActionResult {
  status: number;
  message: string;
}

const CONTINUE_WAIT_MS = 15_000;

/** Whether `name` is an action the page may post. */
export function isAction(name: string): name is Action {
  return ["pause", "resume", "stop", "stop-now", "continue", "answer"].includes(name);
}

/** Carries out `action` on run `ref`; `body` is the posted JSON (for continue's `max_iterations`). */
export async function runAction(ref: RunRef, action: Action, body: Record<string, unknown>): Promise<ActionResult> {
  switch (action) {
    case "pause":
    case "resume":
    case "stop":
    case "stop-now": {
      const outcome = requestControl(ref.project.dir, ref.id, action);
      return { status: outcome.ok ? 200 : 409, message: outcome.message };
    }
    case "continue":
      return continueRun(ref, body.max_iterations);
    case "answer": {
      if (typeof body.text !== "string") return { status: 400, message: "text: expected the answer as a string" };
      const outcome = answerRun(ref.project.dir, ref.id, body.text);
      if (!outcome.ok) return { status: 409, message: outcome.message };
      return {
        status: 200,
        message: outcome.live
          ? `answer sent: run ${ref.id} goes on`
          : `answer recorded: continue run ${ref.id} to go on with it`,
      };
    }
    default: {
      const never: never = action;
      return { status: 400, message: `unknown action ${String(never)}` };
    }
  }
}

/**
 * `ralph continue RUN [-n N]` in its own session, so that it outlives the dashboard and a Ctrl-C of it;
 * the page's stop buttons end it (and its agent tree) through the STOP file like any run.
 * Resolves once the run is live again, or with ralph's own error line if it refused.
 */
async function continueRun(ref: RunRef, rawCap: unknown): Promise<ActionResult> {
  const args = [RALPH_MAIN, "continue", ref.id];
  if (rawCap !== undefined && rawCap !== null && rawCap !== "") {
    // Read as `ralph continue -n` reads it, by the option's declared parser.
    const option = runOption("maxIterations");
    const cap = option.parse(rawCap);
    if (!cap.ok)
      return {
        status: 400,
        message: `${option.yaml ?? option.flag}: expected ${cap.expected}, got ${JSON.stringify(rawCap)}`,
      };
    args.push(option.flag, String(cap.value));
  }
  const scratch = mkdtempSync(join(tmpdir(), "ralph-ui-continue-"));
  const errFile = join(scratch, "stderr");
  const errFd = openSync(errFile, "w", 0o600);
  const child = spawn(process.execPath, args, {
    cwd: ref.project.dir,
    detached: true,
    stdio: ["ignore", "ignore", errFd],
  });
  closeSync(errFd);
  child.unref();
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", () => resolve(-1));
  });
  const deadline = Date.now() + CONTINUE_WAIT_MS;
  try {
    for (;;) {
      const code = await Promise.race([
        exited,
        new Promise<"wait">((resolve) => setTimeout(() => resolve("wait"), 50)),
      ]);
      const { summary, status } = summariseRun(ref.project.dir, ref.id, isRunnerAlive, new Date());
      if (summary.active && status?.pid === child.pid)
        return { status: 200, message: `run ${ref.id} continues (pid ${child.pid})` };
      if (code !== "wait") {
        const said = readFileSync(errFile, "utf8").trim().split("\n")[0] ?? "";
        return code === 0
          ? { status: 200, message: `run ${ref.id} continued and has already ended` }
          : { status: 409, message: said || `ralph continue exited ${String(code)}` };
      }
      if (Date.now() > deadline)
        return {
          status: 202,
          message: `ralph continue ${ref.id} started (pid ${child.pid ?? "?"}) but the run is not live yet`,
        };
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
