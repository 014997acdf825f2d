// The Codex adapter: headless `codex exec --json` with the prompt on stdin (`-`).
import { createCodexParser } from "./codex-parser.js";
import { binaryFrom } from "./json-fields.js";
import { permissionFlags } from "./permission-mode.js";
import type { AgentAdapter, InvocationInput } from "./types.js";

/** Environment variable naming the Codex binary to run (default `codex` on PATH). */
export const CODEX_BIN_VARIABLE = "RALPH_CODEX_BIN";

/** The argv of one Codex iteration (the prompt is not in it: `-` makes Codex read it from stdin). */
export function codexArgv(input: InvocationInput, bin: string): string[] {
  return [
    bin,
    "exec",
    "--json",
    // A loop may run in a directory that is not a git repository; Codex refuses that by default.
    "--skip-git-repo-check",
    // Headless, nothing could answer an approval prompt; the loop itself is the sandbox boundary.
    ...permissionFlags("codex", input.agentArgs ?? []),
    ...(input.model ? ["--model", input.model] : []),
    ...(input.agentArgs ?? []),
    "-",
  ];
}

/** Adapter for Codex (`@openai/codex`, measured with 0.171.0). */
export const codexAdapter: AgentAdapter = {
  name: "codex",
  // SIGINT and SIGTERM both end Codex within ~50 ms and SIGTERM its tool shell, but not what that shell
  // started in the background; SIGINT is its own cancel path, SIGTERM reaches jobs that ignore SIGINT.
  politeSignals: ["SIGINT", "SIGTERM"],
  invocation(input) {
    const bin = binaryFrom(input.env, CODEX_BIN_VARIABLE, "codex");
    return { argv: codexArgv(input, bin), stdin: input.prompt, env: {} };
  },
  parser: createCodexParser,
};
