// `ralph init`: scaffold a project for ralph without touching files that already exist.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const FILES: Record<string, string> = {
  "PROMPT.md": `Work on the current task ({{task}}) in this repository.
Run the tests before you finish. When every task in TASKS.md is checked, print <promise>DONE</promise>.
`,
  "ralph.yaml": `# Defaults for \`ralph run\` (flags and RALPH_* environment variables override these).
agent: claude
max_iterations: 10      # 0 = unlimited
completion_promise: DONE
tasks: TASKS.md
timeout: 30m
max_failures: 3
# max_cost: 5           # US dollars, as estimated by the agent CLI
# check:                # completion criteria: shell commands that pass on exit 0
#   - npm test
`,
  "TASKS.md": `# Tasks

- [ ] First task
- [ ] Second task

## Optional

- [ ] Something for later (not given to the agent)
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
  const gitignore = join(projectDir, ".gitignore");
  const current = existsSync(gitignore) ? readFileSync(gitignore, "utf8") : "";
  if (current.split(/\r?\n/).some((line) => line.trim() === ".ralph/" || line.trim() === ".ralph")) {
    process.stdout.write("kept     .gitignore (already ignores .ralph/)\n");
  } else {
    appendFileSync(gitignore, `${current === "" || current.endsWith("\n") ? "" : "\n"}.ralph/\n`, { mode: 0o644 });
    process.stdout.write("updated  .gitignore (ignores .ralph/)\n");
  }
  return 0;
}
