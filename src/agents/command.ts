// The `command` agent: any argv; the prompt arrives on stdin and the final message is its stdout.
import { TextTail } from "../util/text-tail.js";
import type { AgentAdapter, AgentEvent, OutputParser } from "./types.js";

/** Keeps at most this much of a command's stdout as its final message. */
const FINAL_MESSAGE_LIMIT = 256 * 1024;

function createCommandParser(): OutputParser {
  // The end of stdout, each line followed by its newline; each line costs O(its length), in fixed memory.
  const tail = new TextTail(FINAL_MESSAGE_LIMIT);
  return {
    line(text: string): AgentEvent[] {
      tail.append(text);
      tail.append("\n");
      return [{ kind: "text", text }];
    },
    finish(_stderrTail, exit) {
      // A plain command has no result record: its exit status says whether its output is a result.
      return { finalMessage: tail.text(), sawResult: exit.code === 0 };
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
