// `ralph init`: scaffold a project for ralph without touching files that already exist.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureIgnored } from "../../store/gitignore.js";

/** The first line of the PROMPT.md that `ralph init` writes: a prompt holding it has no task written in yet. */
export const PROMPT_TEMPLATE_LINE = `Replace this text with the task: what to change, how to check it, and what "done" means.`;

// No placeholder task is active: an ad-hoc `ralph run "…"` in this project runs exactly what it is given.
const FILES: Record<string, string> = {
  "PROMPT.md": `${PROMPT_TEMPLATE_LINE}

Work in small steps and run the tests before you finish.
When the whole task is done and the tests pass, end your final message with <promise>DONE</promise>.
`,
  "ralph.yaml": `# Defaults for \`ralph run\` in this project. Flags and RALPH_* environment variables override them;
# every key is a \`ralph run\` option in snake_case (see the README, "ralph run options").
agent: claude
max_iterations: 10          # 0 = unlimited
completion_promise: DONE    # the run may end when the final message holds <promise>DONE</promise>
timeout: 30m                # per iteration
max_failures: 3             # consecutive failed iterations before FAILED
# max_cost: 5               # US dollars, as estimated by the agent CLI

# The promise counts only when every criterion passes (types: command, file_exists, no_files, tasks_done):
# completion_criteria:
#   - {type: command, check: "npm test"}
#   - {type: no_files, check: "docs/todo/*.md"}

# One task at a time from a checklist; the run ends with NO_WORK when all are checked:
# tasks: TASKS.md

# Extra arguments for the agent CLI, e.g. ask before edits instead of skipping permission prompts:
# agent_args: ["--permission-mode", "acceptEdits"]

# Where to hear about the run (default events: run_ended, waiting_limit, needs_human, stalled):
# notify:
#   - desktop: true
#   - webhook: https://hooks.slack.com/services/...
#     format: slack
#     events: [run_ended, needs_human]

# Another agent for the iterations while this one waits out a usage limit resetting more than max_wait away:
# fallback_agent: [codex]
# max_wait: 15m
`,
  "TASKS.md": `# Tasks

One task per line as a Markdown checkbox: a dash, a space, [ ], a space, then the task.
With \`ralph run --tasks TASKS.md\` (or \`tasks: TASKS.md\` in ralph.yaml) the agent gets the first
unchecked task each iteration, and checks it with [x] when done.
`,
};

/** Writes the scaffold into `projectDir`; existing files are left alone and reported. */
export async function initCommand(projectDir: string): Promise<number> {
  for (const [name, content] of Object.entries(FILES)) {
    const path = join(projectDir, name);
    if (existsSync(path)) {
      process.stdout.write(`kept     ${name} (already exists)\n`);
    } else {
      // Explicit modes: a permissive umask (000) must not make project files world-writable.
      writeFileSync(path, content, { flag: "wx", mode: 0o644 });
      process.stdout.write(`created  ${name}\n`);
    }
  }
  const added = ensureIgnored(projectDir, [".ralph/"]);
  process.stdout.write(added.length > 0 ? "updated  .gitignore (ignores .ralph/)\n" : "kept     .gitignore (already ignores .ralph/)\n");
  process.stdout.write(
    [
      "",
      "next: write the task into PROMPT.md, then start the loop:",
      "  ralph run                      # PROMPT.md, with the defaults in ralph.yaml",
      "  ralph run --tasks TASKS.md     # or, once TASKS.md lists tasks, one task at a time",
      "  ralph run --dry-run -n 1       # or first see the exact command and prompt, without starting the agent",
      "",
    ].join("\n"),
  );
  return 0;
}
