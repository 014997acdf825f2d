// `ralph hook handle`, the Stop hook itself: a file of its own, so that Claude Code's call at every stop
// loads only what deciding that stop needs.
import { existsSync } from "node:fs";
import type { StopDecision } from "../../hook/handle-stop.js";
import { hookFiles, projectDirFrom } from "../../hook/hook-files.js";
import { parseStopHookInput } from "../../hook/hook-input.js";
import type { HookClock } from "../../hook/hook-run.js";
import { readStdin, StdinTimeout, stdinIsTerminal } from "../../hook/read-stdin.js";
import { requireBuiltin } from "../../util/require-builtin.js";
import { UsageError } from "../usage-error.js";
import { writeOut } from "../write-out.js";

/** The loop's clock and place, asked for only when there is a loop (the call with none loads no more of Node). */
function clock(): HookClock {
  return {
    now: () => new Date(),
    pid: process.pid,
    hostname: (requireBuiltin("node:os") as typeof import("node:os")).hostname(),
  };
}

function renderDecision(decision: StopDecision): string {
  if (decision.kind === "block")
    return `${JSON.stringify({ decision: "block", reason: decision.reason, systemMessage: decision.systemMessage })}\n`;
  return decision.message ? `${JSON.stringify({ systemMessage: decision.message })}\n` : "";
}

/** The loop's own modules (handle-stop.ts), loaded only when there is a loop to decide a stop for. */
export type LoadLoop = () => Promise<typeof import("../../hook/handle-stop.js")>;

/**
 * `ralph hook handle`: run by Claude Code at every stop. Never fails the session: any error lets it stop.
 * An input that has not ended within `stdinTimeoutMs` is answered as a failure, then the process ends
 * itself (SIGKILL: its read of stdin would keep it alive, and Claude Code waits for it to exit). The quick
 * path, run from a code cache where import() is not available, passes its own `loadLoop`.
 */
export async function hookHandleCommand(
  stdinTimeoutMs = 10_000,
  loadLoop: LoadLoop = () => import("../../hook/handle-stop.js"),
): Promise<number> {
  if (stdinIsTerminal())
    throw new UsageError("hook handle is run by Claude Code's Stop hook, with the hook's JSON on stdin");
  let projectDir: string | null = null;
  try {
    projectDir = projectDirFrom(process.env, process.cwd());
    const parsed = parseStopHookInput(await readStdin(stdinTimeoutMs));
    if (!parsed.ok) throw new Error(parsed.message);
    projectDir = projectDirFrom(process.env, parsed.input.cwd ?? process.cwd());
    // No loop file, nothing to decide (handleStop's own first answer): the loop's modules stay unloaded.
    if (!existsSync(hookFiles(projectDir).loop)) return 0;
    const { handleStop } = await loadLoop();
    writeOut(renderDecision(await handleStop(parsed.input, { ...clock(), projectDir, env: process.env })));
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "unknown error";
    let runId: string | null = null;
    try {
      const { recordHookFailure } = await loadLoop();
      if (projectDir !== null) runId = recordHookFailure(projectDir, message, clock());
    } catch {
      // Nothing more can be recorded; the line below still tells the user.
    }
    const ended = runId ? `; the loop ended (FAILED, run ${runId})` : "";
    process.stderr.write(`ralph hook handle: ${message}${ended}\n`);
    writeOut(`${JSON.stringify({ systemMessage: `ralph: the Stop hook failed: ${message}${ended}` })}\n`);
    // Both lines are written (synchronously, to a pipe or a file): nothing is lost by ending here.
    if (error instanceof StdinTimeout) process.kill(process.pid, "SIGKILL");
  }
  return 0;
}
