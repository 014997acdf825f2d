// `/ralph-loop`, `/cancel-ralph` and `/ralph-help`: Claude Code command files under `.claude/commands/`.
//
// Claude Code (2.1.197) substitutes $ARGUMENTS into the file, then runs each ```! block through bash
// (allowed by the `allowed-tools` Bash(prefix:*) pattern) and puts its output into the prompt; a block
// that exits non-zero aborts the command and shows its stderr. The arguments reach ralph inside a quoted
// here-document, so no shell globs, splits or expands them; `ralph hook start --stdin` parses them with
// shell quoting rules itself.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { runOption } from "../config/run-options.js";
import { DEFAULT_BLOCK_CAP } from "./block-cap.js";

/** One command file and whether it was (re)written. */
export interface CommandFile {
  file: string;
  changed: boolean;
}

function frontMatter(fields: Record<string, string>): string {
  return `---\n${stringify(fields, { lineWidth: 0 })}---\n`;
}

/** A here-document delimiter no pasted text will hold on a line of its own by chance. */
export function argumentsDelimiter(): string {
  return `RALPH_ARGS_${randomBytes(8).toString("hex")}`;
}

/** The three files' names and contents; `cli` is the shell-quoted command that runs this ralph. */
export function slashCommandFiles(cli: string, delimiter: string = argumentsDelimiter()): Record<string, string> {
  const start = `${cli} hook start --stdin`;
  const cancel = `${cli} hook cancel`;
  return {
    "ralph-loop.md": `${frontMatter({
      description: "Start a ralph loop in this session (the Stop hook repeats the prompt until it is done)",
      "argument-hint": "PROMPT [--max-iterations N] [--completion-promise TEXT] [--check CMD]",
      "allowed-tools": `Bash(${start}:*)`,
    })}
\`\`\`!
${start} <<'${delimiter}'
$ARGUMENTS
${delimiter}
\`\`\`

Work on the task above now. Each time you finish, ralph's Stop hook gives you the same task again, until
the completion promise is true and every completion check passes, or the iteration limit is reached.
Your earlier work stays in the files. Output the promise tag only when the statement in it is completely
true: never to get out of the loop.
`,
    "cancel-ralph.md": `${frontMatter({
      description: "Cancel the ralph loop of this project",
      "allowed-tools": `Bash(${cancel}:*)`,
    })}
\`\`\`!
${cancel}
\`\`\`

Tell the user, in one sentence, what ralph reported above.
`,
    "ralph-help.md": `${frontMatter({ description: "Explain ralph's in-session loop and its options" })}
Explain the following to the user, briefly and in your own words, then stop.

ralph runs an in-session loop through a Claude Code Stop hook: \`/ralph-loop PROMPT [options]\` starts it,
and every time this session tries to stop, the hook feeds PROMPT back as the next instruction.

- \`--max-iterations N\` (\`-n N\`): stop after N iterations. The default is ${runOption("maxIterations").defaultValue}; 0 means unlimited.
- \`--completion-promise TEXT\`: the loop ends when your final message contains \`<promise>TEXT</promise>\`
  and it is true. A tag that is quoted, negated, in code, or copied from the prompt does not count.
- \`--check CMD\` (repeatable): a completion criterion, a shell command that must exit 0. With a promise,
  checks run once the promise is claimed; without one, after every iteration. Failing output goes into
  the next prompt.
- Cancel with \`/cancel-ralph\` (or \`ralph hook cancel\` in a terminal), or set \`active: false\` in
  \`.claude/ralph-loop.local.md\`. The loop also ends on its own when done or at the iteration limit.
- Every loop is recorded under \`.ralph/runs/<id>/\`: \`ralph list\` and \`ralph status\` show it.
- Claude Code ends a turn after ${DEFAULT_BLOCK_CAP} consecutive Stop-hook blocks (or CLAUDE_CODE_STOP_HOOK_BLOCK_CAP):
  the loop then pauses, and any message you send resumes it.

Quoting: the arguments are split like a shell would, but nothing is expanded, so \`?\`, \`*\`, \`&\`, \`$\`
and URLs such as \`https://x.test/?a=1&b=2\` are safe as typed. Put a multi-word promise in quotes:
\`--completion-promise "ALL TESTS PASS"\`. An apostrophe starts a quote: write \`don\\'t\`, or put the
words in double quotes ("don't"). Words after \`--\` are always prompt text, even if they start with \`-\`.
`,
  };
}

/** Writes the command files into `dir`; files that already hold the same text are left untouched. */
export function writeSlashCommands(dir: string, cli: string): CommandFile[] {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  // Keep the delimiter of an earlier install, so installing twice changes nothing.
  const loopFile = join(dir, "ralph-loop.md");
  const earlier = existsSync(loopFile)
    ? /<<'(RALPH_ARGS_[0-9a-f]{16})'/.exec(readFileSync(loopFile, "utf8"))?.[1]
    : undefined;
  return Object.entries(slashCommandFiles(cli, earlier)).map(([name, text]) => {
    const file = join(dir, name);
    const same = existsSync(file) && readFileSync(file, "utf8") === text;
    if (!same) writeFileSync(file, text, { mode: 0o644 });
    return { file, changed: !same };
  });
}

/** What marks each command file as the one ralph wrote (whatever ralph command it names). */
const OURS: Record<string, RegExp> = {
  "ralph-loop.md": / hook start --stdin <<'RALPH_ARGS_[0-9a-f]{16}'/,
  "cancel-ralph.md": / hook cancel\n```/,
  "ralph-help.md": /ralph runs an in-session loop through a Claude Code Stop hook/,
};

/** Removes the command files ralph wrote from `dir`; a file of that name that is not ralph's is kept (and listed). */
export function removeSlashCommands(dir: string): { removed: string[]; kept: string[] } {
  const removed: string[] = [];
  const kept: string[] = [];
  for (const [name, mark] of Object.entries(OURS)) {
    const file = join(dir, name);
    if (!existsSync(file)) continue;
    if (mark.test(readFileSync(file, "utf8"))) {
      unlinkSync(file);
      removed.push(file);
    } else kept.push(file);
  }
  return { removed, kept };
}
