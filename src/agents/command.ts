// The `command` agent: any argv; the prompt arrives on stdin and the final message is its stdout.
import type { AgentAdapter, AgentEvent, OutputParser } from "./types.js";

/** Keeps at most this much of a command's stdout as its final message. */
const FINAL_MESSAGE_LIMIT = 256 * 1024;

function createCommandParser(): OutputParser {
  // Lines are collected and only joined and cut when twice the limit has piled up, so each line costs O(1).
  let lines: string[] = [];
  let length = 0;
  const compact = () => {
    const joined = lines.join("");
    lines = [joined.length > FINAL_MESSAGE_LIMIT ? joined.slice(-FINAL_MESSAGE_LIMIT) : joined];
    length = (lines[0] as string).length;
  };
  return {
    line(text: string): AgentEvent[] {
      lines.push(`${text}\n`);
      length += text.length + 1;
      if (length > 2 * FINAL_MESSAGE_LIMIT) compact();
      return [{ kind: "text", text }];
    },
    finish(_stderrTail, exit) {
      compact();
      // A plain command has no result record: its exit status says whether its output is a result.
      return { finalMessage: lines[0] ?? "", sawResult: exit.code === 0 };
    },
  };
}

/** Adapter for an arbitrary command given with --agent-cmd or after `--`. */
export const commandAdapter: AgentAdapter = {
  name: "command",
  politeSignals: ["SIGTERM"],
  invocation(input) {
    if (!input.commandArgv || input.commandArgv.length === 0) throw new Error("the command agent needs an argv");
    return { argv: [...input.commandArgv, ...(input.agentArgs ?? [])], stdin: input.prompt, env: {} };
  },
  parser: createCommandParser,
};
