// The OpenCode adapter: headless `opencode run --format json` with the prompt on stdin.
import { createOpencodeParser } from "./opencode-parser.js";
import { binaryFrom } from "./json-fields.js";
import { permissionFlags } from "./permission-mode.js";
import type { AgentAdapter, InvocationInput } from "./types.js";

/** Environment variable naming the OpenCode binary to run (default `opencode` on PATH). */
export const OPENCODE_BIN_VARIABLE = "RALPH_OPENCODE_BIN";

/** OpenCode's switch that skips the project's configuration (its opencode.json files, .opencode/ directories and instruction files). */
export const OPENCODE_NO_PROJECT_CONFIG = "OPENCODE_DISABLE_PROJECT_CONFIG";

/**
 * The argv of one OpenCode iteration. The prompt is not in it: `opencode run` without a message reads
 * it from stdin when stdin is not a terminal, so there is no argv length limit.
 */
export function opencodeArgv(input: InvocationInput, bin: string): string[] {
  return [
    bin,
    "run",
    "--format",
    "json",
    // Headless, every permission that would ask (e.g. a path outside the project) is rejected;
    // --auto approves those, and still honours permissions the user set to "deny".
    ...permissionFlags("opencode", input.agentArgs ?? []),
    ...(input.model ? ["--model", input.model] : []),
    ...(input.agentArgs ?? []),
  ];
}

/** Adapter for OpenCode (`opencode-ai`, measured with 1.18.33). */
export const opencodeAdapter: AgentAdapter = {
  name: "opencode",
  // `opencode run` ignores SIGINT; SIGTERM ends it within ~0.1 s (exit 143) but leaves its bash tool's
  // process (its own session) running, so the tree kill that follows is what ends that.
  politeSignals: ["SIGTERM"],
  invocation(input) {
    const bin = binaryFrom(input.env, OPENCODE_BIN_VARIABLE, "opencode");
    // OpenCode takes its directory from PWD, not from the working directory it was started in
    // (measured: with an inherited PWD its bash tool ran in the caller's directory).
    // A reviewer takes no opencode.json, .opencode/ or AGENTS.md from the tree the agent wrote: a provider's baseURL there would name the API server.
    const untrusted: Record<string, string> = input.untrustedTree ? { [OPENCODE_NO_PROJECT_CONFIG]: "1" } : {};
    return { argv: opencodeArgv(input, bin), stdin: input.prompt, env: { PWD: input.cwd, ...untrusted } };
  },
  parser: createOpencodeParser,
};
