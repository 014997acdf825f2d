// The ralph.yaml `ralph init` writes: its keys, values and defaults come from the option declarations, and a
// test command the project already has (npm test, pytest, cargo test, go test, make test) becomes its check.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runOption, type OptionSpec, type RunSettings } from "./run-options.js";
import type { OptionType } from "./option-types.js";

/** A test command found in the project, and the file that told. */
export interface FoundTestCommand {
  command: string;
  source: string;
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** npm's placeholder script (`npm init` writes it): no tests at all. */
const NPM_PLACEHOLDER = /no test specified/;

/** The project's own test command, looked for in the files that declare one; null when there is none. */
export function findTestCommand(dir: string): FoundTestCommand | null {
  const pkg = readText(join(dir, "package.json"));
  if (pkg !== null) {
    try {
      const test = (JSON.parse(pkg) as { scripts?: { test?: unknown } }).scripts?.test;
      if (typeof test === "string" && test.trim() !== "" && !NPM_PLACEHOLDER.test(test))
        return { command: "npm test", source: "package.json" };
    } catch {
      // An unreadable package.json names no test command.
    }
  }
  const pyproject = readText(join(dir, "pyproject.toml"));
  if (
    existsSync(join(dir, "pytest.ini")) ||
    existsSync(join(dir, "conftest.py")) ||
    (pyproject !== null && /pytest/.test(pyproject))
  ) {
    return {
      command: "pytest",
      source: existsSync(join(dir, "pytest.ini"))
        ? "pytest.ini"
        : existsSync(join(dir, "conftest.py"))
          ? "conftest.py"
          : "pyproject.toml",
    };
  }
  if (existsSync(join(dir, "Cargo.toml"))) return { command: "cargo test", source: "Cargo.toml" };
  if (existsSync(join(dir, "go.mod"))) return { command: "go test ./...", source: "go.mod" };
  for (const name of ["GNUmakefile", "makefile", "Makefile"]) {
    const make = readText(join(dir, name));
    if (make !== null && /^test\s*:/m.test(make)) return { command: "make test", source: name };
  }
  return null;
}

/** `key: value` for an option with its declared default, as ralph.yaml writes it. */
function line<K extends keyof RunSettings>(key: K, comment: string, value?: RunSettings[K]): string {
  const spec: OptionSpec<K> = runOption(key);
  const shown = (spec.type as OptionType<RunSettings[K]>).show(value ?? spec.defaultValue) ?? "";
  return `${`${spec.yaml ?? key}: ${shown}`.padEnd(27)} # ${comment}`;
}

/** A ralph.yaml's key as the comment names it, so that a renamed option renames its mention here. */
const yamlKey = (key: keyof RunSettings): string => runOption(key).yaml ?? key;

/** The ralph.yaml `ralph init` writes; `found` is the project's test command, made its check. */
export function ralphYamlTemplate(found: FoundTestCommand | null): string {
  const criteria = found
    ? [
        `# The promise counts only when every criterion passes (types: command, file_exists, no_files, tasks_done, review).`,
        `# ${found.source} says the tests run with \`${found.command}\`:`,
        `completion_criteria:`,
        `  - {type: command, check: ${JSON.stringify(found.command)}}`,
        `#   - {type: no_files, check: "docs/todo/*.md"}`,
        `#   - {type: review, agent: claude}     # another agent reads the diff and approves it`,
      ]
    : [
        `# The promise counts only when every criterion passes (types: command, file_exists, no_files, tasks_done, review):`,
        `# completion_criteria:`,
        `#   - {type: command, check: "npm test"}`,
        `#   - {type: no_files, check: "docs/todo/*.md"}`,
        `#   - {type: review, agent: claude}     # another agent reads the diff and approves it`,
      ];
  return [
    "# Defaults for `ralph run` in this project. Flags and RALPH_* environment variables override them;",
    "# every key is a `ralph run` option in snake_case (see docs/reference/options.md in ralph's docs).",
    line("agent", "the agent CLI"),
    line("maxIterations", "0 = unlimited"),
    line("completionPromise", "the run may end when the final message holds <promise>DONE</promise>", "DONE"),
    line("timeoutMs", "per iteration"),
    line("maxFailures", "consecutive failed iterations before FAILED"),
    `# ${yamlKey("maxCostUsd")}: 5`.padEnd(27) + " # US dollars, as estimated by the agent CLI",
    "",
    ...criteria,
    "",
    "# One task at a time from a checklist; the run ends when all are checked:",
    `# ${yamlKey("tasks")}: TASKS.md`,
    "",
    "# Extra arguments for the agent CLI, e.g. ask before edits instead of skipping permission prompts:",
    `# ${yamlKey("agentArgs")}: ["--permission-mode", "acceptEdits"]`,
    "",
    "# Where to hear about the run (default events: run_ended, waiting_limit, needs_human, stalled):",
    "# notify:",
    "#   - desktop: true",
    "#   - webhook: https://hooks.slack.com/services/...",
    "#     format: slack",
    "#     events: [run_ended, needs_human]",
    "",
    `# Another agent for the iterations while this one waits out a usage limit resetting more than ${yamlKey("maxWaitMs")} away:`,
    `# ${yamlKey("fallbackAgents")}: [codex]`,
    `# ${yamlKey("maxWaitMs")}: 15m`,
    "",
  ].join("\n");
}
