// `ralph init`: scaffold a project for ralph without touching files that already exist.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureIgnored } from "../../store/gitignore.js";
import { findTestCommand, ralphYamlTemplate } from "../../config/init-template.js";

/** The first line of the PROMPT.md that `ralph init` writes: a prompt holding it has no task written in yet. */
export const PROMPT_TEMPLATE_LINE = `Replace this text with the task: what to change, how to check it, and what "done" means.`;

// No placeholder task is active: an ad-hoc `ralph run "…"` in this project runs exactly what it is given.
const PROMPT_MD = `${PROMPT_TEMPLATE_LINE}

Work in small steps and run the tests before you finish.
When the whole task is done and the tests pass, end your final message with <promise>DONE</promise>.
`;

const TASKS_MD = `# Tasks

One task per line as a Markdown checkbox: a dash, a space, [ ], a space, then the task.
With \`ralph run --tasks TASKS.md\` (or \`tasks: TASKS.md\` in ralph.yaml) the agent gets the first
unchecked task each iteration, and checks it with [x] when done.
`;

/** Writes the scaffold into `projectDir`; existing files are left alone and reported. */
export async function initCommand(projectDir: string): Promise<number> {
  const found = findTestCommand(projectDir);
  // ralph.yaml is written from the option declarations, with the project's own test command as its check.
  const files = { "PROMPT.md": PROMPT_MD, "ralph.yaml": ralphYamlTemplate(found), "TASKS.md": TASKS_MD };
  for (const [name, content] of Object.entries(files)) {
    const path = join(projectDir, name);
    if (existsSync(path)) {
      process.stdout.write(`kept     ${name} (already exists)\n`);
    } else {
      // Explicit modes: a permissive umask (000) must not make project files world-writable.
      writeFileSync(path, content, { flag: "wx", mode: 0o644 });
      const check = name === "ralph.yaml" && found ? ` (check: ${found.command}, from ${found.source})` : "";
      process.stdout.write(`created  ${name}${check}\n`);
    }
  }
  const added = ensureIgnored(projectDir, [".ralph/"]);
  process.stdout.write(
    added.length > 0 ? "updated  .gitignore (ignores .ralph/)\n" : "kept     .gitignore (already ignores .ralph/)\n",
  );
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
