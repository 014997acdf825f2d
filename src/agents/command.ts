// The `command` agent: any argv; the prompt arrives on stdin and the final message is its stdout.
import type { AgentAdapter, AgentEvent, OutputParser } from "./types.js";

/** Keeps at most this much of a command's stdout as its final message. */
const FINAL_MESSAGE_LIMIT = 256 * 1024;

function createCommandParser(): OutputParser {
  let output = "";
  return {
    line(text: string): AgentEvent[] {
      output = `${output}${text}\n`;
      if (output.length > FINAL_MESSAGE_LIMIT) output = output.slice(-FINAL_MESSAGE_LIMIT);
      return [{ kind: "text", text }];
    },
    finish(_stderrTail, exit) {
      // A plain command has no result record: its exit status says whether its output is a result.
      return { finalMessage: output, sawResult: exit.code === 0 };
    },
  };
}

/** Adapter for an arbitrary command given with --agent-cmd or after `--`. */
export const commandAdapter: AgentAdapter = {
  name: "command",
  politeSignals: ["SIGTERM"],
  invocation(input) {
    if (!input.commandArgv || input.commandArgv.length === 0) throw new Error("the command agent needs an argv");
    return { argv: [...input.commandArgv], stdin: input.prompt, env: {} };
  },
  parser: createCommandParser,
};
