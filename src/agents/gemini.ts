// The Gemini CLI adapter: headless `gemini --output-format stream-json` with the prompt on stdin.
import { createGeminiParser } from "./gemini-parser.js";
import { binaryFrom } from "./json-fields.js";
import { permissionFlags } from "./permission-mode.js";
import type { AgentAdapter, InvocationInput } from "./types.js";
import { userHomeOutside } from "./user-home.js";

/** Environment variable naming the Gemini CLI binary to run (default `gemini` on PATH). */
export const GEMINI_BIN_VARIABLE = "RALPH_GEMINI_BIN";

/**
 * The argv of one Gemini CLI iteration. The prompt is not in it: with stdin not a terminal, Gemini CLI
 * runs headless and reads the prompt from stdin (up to 8 MB), so no -p and no argv length limit.
 */
export function geminiArgv(input: InvocationInput, bin: string): string[] {
  return [
    bin,
    "--output-format",
    "stream-json",
    // Headless, nothing could answer an approval prompt.
    ...permissionFlags("gemini", input.agentArgs ?? []),
    // Headless runs in an untrusted folder exit at once (exit 55); the user chose this project by running the loop in it.
    "--skip-trust",
    ...(input.model ? ["--model", input.model] : []),
    // A reviewer starts in HOME (untrustedCwd): the work tree is then a directory of its workspace, whose .env and settings it does not read.
    ...(input.untrustedTree ? ["--include-directories", input.cwd] : []),
    ...(input.agentArgs ?? []),
  ];
}

/** Adapter for Gemini CLI (`@google/gemini-cli`, measured with 0.61.0). */
export const geminiAdapter: AgentAdapter = {
  name: "gemini",
  // Gemini CLI relaunches itself as a child node process; the parent ignores SIGINT and SIGTERM and waits.
  // The child exits 0 within ~0.1 s on SIGINT (~1.6 s on SIGTERM), leaving its tool shells running.
  politeSignals: ["SIGINT", "SIGTERM"],
  invocation(input) {
    const bin = binaryFrom(input.env, GEMINI_BIN_VARIABLE, "gemini");
    return { argv: geminiArgv(input, bin), stdin: input.prompt, env: {} };
  },
  parser: createGeminiParser,
  // Gemini CLI reads .gemini/settings.json in its directory and the first .env (or .gemini/.env) from there
  // upward, before ~/.gemini/.env: started in the tree, a planted .env would name its API server. Started in
  // HOME, it reads only the user's settings and env files.
  untrustedCwd: ({ cwd, env }) => userHomeOutside(cwd, env),
};
