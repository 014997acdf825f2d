// `ralph hook start|cancel|handle|install`: the in-session loop for Claude Code through a Stop hook.
import { hostname } from "node:os";
import { relative } from "node:path";
import { Command, CommanderError } from "commander";
import { runOption } from "../../config/run-options.js";
import { declaredOption } from "../run-flags.js";
import { blockCap } from "../../hook/block-cap.js";
import { cancelHookLoop } from "../../hook/cancel-loop.js";
import { hookFiles, projectDirFrom, type HookFiles } from "../../hook/hook-files.js";
import { startSummary } from "../../hook/hook-messages.js";
import type { HookClock } from "../../hook/hook-run.js";
import { installStopHook, removeStopHook } from "../../hook/install-hook.js";
import { ensureIgnored } from "../../store/gitignore.js";
import { readAll } from "../../hook/read-all.js";
import { shellCommandLine, splitShellWords } from "../../util/shell-words.js";
import { removeSlashCommands, writeSlashCommands } from "../../hook/slash-commands.js";
import { activeLoopProblem, startHookLoop } from "../../hook/start-loop.js";
import { UsageError } from "../usage-error.js";
import { ralphOnPath } from "../ralph-on-path.js";
import { hookHandleCommand } from "./hook-handle.js";
import { RALPH_MAIN } from "../../process/ralph-entry.js";

const clock: HookClock = { now: () => new Date(), pid: process.pid, hostname: hostname() };

/** This ralph as a shell command: absolute node and script paths, so hooks work without ralph on PATH. */
function ralphCommand(...args: string[]): string {
  return shellCommandLine([process.execPath, RALPH_MAIN, ...args]);
}

interface StartFlags {
  maxIterations?: string;
  completionPromise?: string;
  check?: string[];
  stdin?: boolean;
}

function addStartOptions(command: Command): Command {
  // The same options as `ralph run`'s, from their declarations (defaults included).
  return command
    .addOption(declaredOption(runOption("maxIterations")))
    .addOption(
      declaredOption(
        runOption("completionPromise"),
        "done when the final message holds <promise>TEXT</promise> (and the checks pass)",
      ),
    )
    .addOption(declaredOption(runOption("checks")));
}

/** Parses argument text read with --stdin as the same options, split with shell quoting rules. */
function parseStdinArguments(text: string): { words: string[]; flags: StartFlags } {
  const split = splitShellWords(text);
  if (!split.ok) throw new UsageError(`--stdin: ${split.message}`);
  const parser = addStartOptions(
    new Command("start")
      .argument("[prompt...]")
      .exitOverride()
      .configureOutput({ writeErr: () => undefined, outputError: () => undefined }),
  );
  try {
    parser.parse(split.words, { from: "user" });
  } catch (error) {
    throw new UsageError(
      `--stdin: ${error instanceof CommanderError ? error.message.replace(/^error: /, "") : String(error)}`,
    );
  }
  return { words: parser.args, flags: parser.opts<StartFlags>() };
}

/** `ralph hook start [PROMPT...] [options]`. */
export async function hookStartCommand(projectDir: string, cliWords: string[], cliFlags: StartFlags): Promise<number> {
  let words = cliWords;
  let flags = cliFlags;
  if (cliFlags.stdin) {
    if (
      cliWords.length > 0 ||
      cliFlags.maxIterations !== undefined ||
      cliFlags.completionPromise !== undefined ||
      cliFlags.check !== undefined
    ) {
      throw new UsageError("--stdin reads the whole argument text from stdin: give no other arguments");
    }
    ({ words, flags } = parseStdinArguments(await readAll(process.stdin, 30_000)));
  }
  const prompt = words.join(" ");
  if (prompt.trim() === "") throw new UsageError("no prompt given: ralph hook start PROMPT... [options] (or --stdin)");
  const cap = runOption("maxIterations");
  const max =
    flags.maxIterations === undefined ? { ok: true as const, value: cap.defaultValue } : cap.parse(flags.maxIterations);
  if (!max.ok)
    throw new UsageError(`${cap.flag}: expected ${max.expected}, got ${JSON.stringify(flags.maxIterations)}`);
  const promise =
    flags.completionPromise === undefined ? null : runOption("completionPromise").parse(flags.completionPromise.trim());
  if (promise && !promise.ok) throw new UsageError(`--completion-promise: expected ${promise.expected}`);
  const checks = flags.check ?? [];
  const emptyCheck = checks.find((check) => check.trim() === "");
  if (emptyCheck !== undefined) throw new UsageError("--check: expected a shell command, got an empty text");

  const problem = activeLoopProblem(projectDir, clock);
  if (problem) throw new UsageError(problem);
  const files = hookFiles(projectDir);
  const installed = installHook(projectDir, files);
  const sessionId = process.env.CLAUDE_CODE_SESSION_ID;
  const started = await startHookLoop(
    projectDir,
    {
      prompt,
      maxIterations: max.value,
      completionPromise: promise?.ok ? promise.value : null,
      criteria: checks.map((check) => ({ type: "command", check })),
      // Started from inside a session (e.g. /ralph-loop): bind the loop to it at once.
      sessionId: sessionId && /^[A-Za-z0-9_-]{8,}$/.test(sessionId) ? sessionId : null,
    },
    clock,
  );
  if (!started.ok) throw new UsageError(started.message);
  const lines = startSummary({
    runId: started.runId,
    state: started.loop,
    hookLine: `${installed.lines.join("; ")}; state in ${relative(projectDir, files.loop)}`,
    cap: blockCap(process.env),
    hookNewInSession: installed.changed && started.loop.sessionId !== "",
  });
  // From a terminal (not from /ralph-loop inside a session), the person still has to start the session: say
  // exactly how, with the task as its first message (quoted for the shell, never expanded).
  if (started.loop.sessionId === "") {
    lines.push(
      "",
      "next: start Claude Code here with the task as its first message:",
      `  ${shellCommandLine(["claude", prompt])}`,
      "(or start claude and type the task as your first message); each time it stops, the Stop hook gives it the task again until it is done",
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/**
 * Installs the Stop hook in settings.local.json (per machine), moves an older entry out of the shared
 * settings.json, and keeps the per-machine files out of git. Returns what it did, one line each.
 */
function installHook(projectDir: string, files: HookFiles): { changed: boolean; lines: string[] } {
  const installed = installStopHook(files.settings, ralphCommand("hook", "handle"));
  if (!installed.ok) throw new UsageError(installed.message);
  const lines = [
    `Stop hook ${installed.changed ? "installed in" : "already in"} ${relative(projectDir, files.settings)}`,
  ];
  const moved = removeStopHook(files.sharedSettings);
  if (!moved.ok)
    lines.push(`could not take the old entry out of ${relative(projectDir, files.sharedSettings)}: ${moved.message}`);
  else if (moved.changed)
    lines.push(
      `moved ralph's entry out of ${relative(projectDir, files.sharedSettings)} (your other settings there are unchanged)`,
    );
  // .ralph/ holds the loop's run records (and settings a person may not want shared): never committed by `git add .`.
  const ignored = ensureIgnored(projectDir, [
    ".claude/settings.local.json",
    ".claude/ralph-loop.local.md",
    ".claude/ralph-loop.local.lock",
    ".ralph/",
  ]);
  if (ignored.length > 0) lines.push(`.gitignore now ignores ${ignored.join(", ")}`);
  return { changed: installed.changed, lines };
}

/** `ralph hook cancel`. */
export async function hookCancelCommand(projectDir: string): Promise<number> {
  const outcome = await cancelHookLoop(projectDir, clock);
  const run = (id: string | null) => (id ? `run ${id}` : "no run recorded");
  switch (outcome.kind) {
    case "none":
      process.stdout.write("ralph: no in-session loop in this project\n");
      break;
    case "already_inactive":
      process.stdout.write(
        `ralph: the in-session loop was not active (${run(outcome.runId)}${outcome.recorded ? ", now recorded as STOPPED" : ""})\n`,
      );
      break;
    case "cancelled":
      process.stdout.write(
        `ralph: in-session loop cancelled at iteration ${outcome.iteration ?? "?"} (${run(outcome.runId)}, ${outcome.recorded ? "STOPPED" : "STOPPED is recorded at the next stop"})\n`,
      );
      break;
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown cancel outcome ${JSON.stringify(unreachable)}`);
    }
  }
  return 0;
}

/** `ralph hook uninstall`: cancels an active loop, takes the Stop hook out and removes the command files ralph wrote. */
export async function hookUninstallCommand(projectDir: string): Promise<number> {
  const files = hookFiles(projectDir);
  const lines: string[] = [];
  // Without the hook nothing would ever end an active loop: it is cancelled first.
  const cancelled = await cancelHookLoop(projectDir, clock);
  if (cancelled.kind === "cancelled")
    lines.push(
      `in-session loop cancelled at iteration ${cancelled.iteration ?? "?"}${cancelled.runId ? ` (run ${cancelled.runId})` : ""}`,
    );
  for (const file of [files.settings, files.sharedSettings]) {
    const removed = removeStopHook(file);
    if (!removed.ok) throw new UsageError(removed.message);
    if (removed.changed) lines.push(`Stop hook removed from ${relative(projectDir, file)}`);
  }
  const commands = removeSlashCommands(files.commands);
  for (const file of commands.removed) lines.push(`${relative(projectDir, file)} removed`);
  if (lines.length === 0) lines.push("no Stop hook of ralph's in this project: nothing to uninstall");
  else {
    for (const file of commands.kept) lines.push(`${relative(projectDir, file)} kept: it is not the one ralph wrote`);
    lines.push("the loop's run records stay in .ralph/runs (ralph list shows them)");
  }
  process.stdout.write(`${lines.map((line) => `ralph: ${line}`).join("\n")}\n`);
  return 0;
}

/** `ralph hook install [--commands]`. */
export async function hookInstallCommand(projectDir: string, commands: boolean): Promise<number> {
  const files = hookFiles(projectDir);
  const lines = installHook(projectDir, files).lines.map((line) => `ralph: ${line}`);
  if (commands) {
    // Command files are usually committed: they name `ralph` from PATH when that is this ralph, else this
    // machine's paths, and then stay out of git so no teammate gets a path that is not theirs.
    const portable = ralphOnPath(process.env.PATH);
    const written = writeSlashCommands(files.commands, portable ? "ralph" : ralphCommand());
    for (const one of written)
      lines.push(`ralph: ${relative(projectDir, one.file)} ${one.changed ? "written" : "up to date"}`);
    if (portable)
      lines.push(
        "ralph: the commands run `ralph` from PATH: they can be committed and work for anyone with ralph installed",
      );
    else {
      const names = written.map((one) => relative(projectDir, one.file));
      const added = ensureIgnored(projectDir, names);
      lines.push(
        `ralph: ralph is not on PATH here, so the commands name this machine's node and ralph; they stay out of git (${added.length > 0 ? "added to" : "already in"} .gitignore). Install ralph on PATH (npm install -g) and run this again for commands a team can share`,
      );
    }
  }
  lines.push(
    'ralph: next: start a loop with ralph hook start "TASK" [-n N] [--completion-promise TEXT] [--check CMD]' +
      (commands ? ", or /ralph-loop TASK inside claude" : ""),
  );
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Adds `ralph hook` and its subcommands; `trailing` (words after `--`) are prompt words for `hook start`. */
export function registerHookCommand(
  program: Command,
  trailing: string[] | null,
  done: (code: Promise<number>) => void,
): void {
  const projectDir = () => projectDirFrom(process.env, process.cwd());
  const hook = program
    .command("hook")
    .description(HOOK_DESCRIPTION)
    .argument("[subcommand]")
    // Said as a person types it (commander would list "[options] [command] [subcommand]").
    .usage("<subcommand> [options]")
    .addHelpText("after", HOOK_HELP_AFTER)
    .exitOverride()
    .action((name: string | undefined) =>
      done(
        Promise.reject(
          new UsageError(
            `${name === undefined ? "hook needs a subcommand" : `unknown hook subcommand '${name}'`}: start, cancel, install, uninstall or handle (see ralph hook --help)`,
          ),
        ),
      ),
    );
  addStartOptions(
    hook
      .command("start")
      .description("start an in-session loop: writes .claude/ralph-loop.local.md and installs the Stop hook")
      .argument("[prompt...]", "the task (words joined with one space)")
      .option(
        "--stdin",
        "read the whole argument text from stdin and split it with shell quoting rules (nothing is expanded)",
      )
      .addHelpText(
        "after",
        "\nA prompt with ?, *, &, = or $ must be quoted in your shell; with --stdin nothing is expanded.",
      )
      .exitOverride(),
  ).action((words: string[], flags: StartFlags) =>
    done(hookStartCommand(projectDir(), [...words, ...(trailing ?? [])], flags)),
  );
  hook
    .command("cancel")
    .description("cancel the in-session loop (active: false; recorded as STOPPED)")
    .exitOverride()
    .action(() => done(hookCancelCommand(projectDir())));
  hook
    .command("handle")
    .description("the Stop hook itself: reads Claude Code's hook JSON on stdin, prints the decision")
    .exitOverride()
    .action(() => done(hookHandleCommand()));
  hook
    .command("install")
    .description(
      "add the Stop hook to .claude/settings.local.json, this machine's own Claude Code settings (idempotent)",
    )
    .option("--commands", "also write the /ralph-loop, /cancel-ralph and /ralph-help commands into .claude/commands/")
    .exitOverride()
    .action((opts: { commands?: boolean }) => done(hookInstallCommand(projectDir(), opts.commands === true)));
  hook
    .command("uninstall")
    .description(
      "take the Stop hook out of .claude/settings.local.json and remove the command files ralph wrote (an active loop is cancelled first)",
    )
    .exitOverride()
    .action(() => done(hookUninstallCommand(projectDir())));
}

/** What `ralph hook` is, in `ralph --help` and `ralph hook --help`. */
const HOOK_DESCRIPTION =
  "in-session loop through a Claude Code Stop hook: start, cancel, install, uninstall (handle is the hook itself)";

const HOOK_HELP_AFTER = `
A loop, start to end:
  ralph hook start "fix the failing tests" -n 5 --check "npm test"
  claude "fix the failing tests"     (the first message; each stop gives it the task again)
  ralph hook cancel                  (or it ends when done, or at -n)
  ralph hook uninstall               (takes the hook out of this project)`;
