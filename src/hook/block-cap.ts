// Claude Code's own cap on consecutive Stop-hook blocks in one turn, and the hook's count of its blocks.
//
// Measured with Claude Code 2.1.197 (claude -p against a fake API, a hook that always blocks): the hook
// runs 9 times in one turn; the first 8 blocks are honoured (8 more model requests), the 9th is overridden
// with the warning "A hook blocked the turn from ending 9 consecutive times — overriding and ending turn".
// CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=N gives N honoured blocks (N+1 hook runs); 0 (or less) removes the cap.
// The count restarts with the next user message. So one turn holds at most cap + 1 loop iterations: the
// hook does not waste a block that would be overridden, it pauses the loop instead (see handle-stop.ts).
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "../store/atomic-write.js";
import { turnFile } from "./hook-files.js";

/** Claude Code's default number of consecutive Stop-hook blocks it honours in one turn (2.1.147 and later). */
export const DEFAULT_BLOCK_CAP = 8;

/** The cap in force for the session the hook runs in (the hook inherits Claude Code's environment); null = none. */
export function blockCap(env: NodeJS.ProcessEnv): number | null {
  const raw = env.CLAUDE_CODE_STOP_HOOK_BLOCK_CAP;
  const value = raw === undefined ? Number.NaN : Number.parseInt(raw, 10);
  if (Number.isNaN(value)) return DEFAULT_BLOCK_CAP;
  return value > 0 ? value : null;
}

/** How many stops the hook has blocked so far in the current turn of the session. */
export function blocksThisTurn(runDir: string, stopHookActive: boolean): number {
  // The first stop of a turn (stop_hook_active false) follows a user message: Claude Code's count restarted.
  if (!stopHookActive) return 0;
  try {
    const value = (JSON.parse(readFileSync(turnFile(runDir), "utf8")) as { blocks?: unknown }).blocks;
    return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
  } catch {
    return 0;
  }
}

/** Records the number of blocks in the current turn. */
export function recordBlocks(runDir: string, blocks: number): void {
  writeFileAtomic(turnFile(runDir), `${JSON.stringify({ blocks })}\n`);
}
