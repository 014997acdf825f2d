// The JSON Claude Code writes to a Stop hook's stdin.
//
// Measured with Claude Code 2.1.197: {session_id, transcript_path, cwd, prompt_id, permission_mode, effort,
// hook_event_name: "Stop", stop_hook_active, last_assistant_message, background_tasks, session_crons}.
// stop_hook_active is false at the first stop of a turn and true at every stop that follows a block.
// Older versions send no last_assistant_message: the transcript is read instead.

/** The fields of a Stop hook input that the loop uses. */
export interface StopHookInput {
  sessionId: string | null;
  transcriptPath: string | null;
  cwd: string | null;
  /** True when this stop follows a block by a Stop hook in the same turn. */
  stopHookActive: boolean;
  /** The text of the last assistant message, when Claude Code sends it. */
  lastAssistantMessage: string | null;
}

/** Parses the hook input; text that is not a JSON object gives a message instead. */
export function parseStopHookInput(text: string): { ok: true; input: StopHookInput } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `the hook input is not JSON (${(error as Error).message})` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { ok: false, message: "the hook input is not a JSON object" };
  const fields = value as Record<string, unknown>;
  const stringField = (name: string): string | null =>
    typeof fields[name] === "string" && fields[name] !== "" ? (fields[name] as string) : null;
  // A session id of blanks is no session id: the loop file keeps ids trimmed, and an empty one means unbound.
  const sessionId = stringField("session_id")?.trim() || null;
  return {
    ok: true,
    input: {
      sessionId,
      transcriptPath: stringField("transcript_path"),
      cwd: stringField("cwd"),
      stopHookActive: fields.stop_hook_active === true,
      lastAssistantMessage: typeof fields.last_assistant_message === "string" ? fields.last_assistant_message : null,
    },
  };
}
