// The command tree of ralph: every command with its arguments and flags declared beside its handler (loaded
// only when the command runs). main.ts parses argv with it; docs/reference/commands.md is rendered from it.
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { addRunOptions, declaredOption } from "./run-flags.js";
import { runFlag, runOption, type OptionSpec } from "../config/run-options.js";
import { findProject } from "./find-project.js";
import { SET_KEYS } from "../config/state-changes.js";

/** The hook command's module, loaded only for `ralph hook …`. */
export type HookModule = typeof import("./commands/hook.js");
type ChildRunOptions = import("./commands/child-run.js").ChildRunOptions;

const VERSION = (
  JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

const QUOTING_NOTE = `
A prompt containing ?, *, &, = or other characters special to your shell must be
quoted (zsh and other globbing shells expand them), or given with --prompt-file.`;

/** Builds the command tree; `trailing` holds the words after `--` (the command agent's argv); `runOptions` replaces the declared run options (a test's). */
export function buildProgram(
  trailing: string[] | null,
  done: (code: Promise<number>) => void,
  hook: HookModule | null,
  runOptions?: readonly OptionSpec[],
): Command {
  const program = new Command("ralph")
    .description(
      "Run an AI coding agent in a loop until the work is provably done, a limit is reached, or you stop it.",
    )
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, outputError: () => undefined });
  addRunOptions(
    program
      .command("run")
      .description("start a loop in the foreground")
      .argument("[prompt...]", "the task (words joined with one space); default: PROMPT.md")
      .addHelpText(
        "after",
        `${QUOTING_NOTE}\n\nThe command agent: ralph run "fix the tests" -- ./my-agent --flag   (the prompt arrives on stdin)`,
      )
      .exitOverride(),
    runOptions,
  ).action((words: string[], _options: unknown, command: Command) =>
    done(import("./commands/run.js").then((m) => m.runCommand(words, command, trailing))),
  );
  // Internal: how a --parallel parent starts a child run or a resolve run as a process of its own.
  program
    .command("child-run", { hidden: true })
    .argument("<parent>")
    .argument("<name>")
    .addOption(declaredOption(runOption("task")))
    .addOption(declaredOption(runOption("resolve")))
    .addOption(declaredOption(runOption("maxCostUsd")))
    .addOption(declaredOption(runOption("maxRuntimeMs")))
    .addOption(declaredOption(runFlag("--watch-parent")))
    .action((parent: string, name: string, opts: ChildRunOptions) =>
      done(import("./commands/child-run.js").then((m) => m.childRunCommand(parent, name, opts))),
    );
  program
    .command("demo")
    .description("a full loop with the built-in demo agent in a temp project (no API key, no network)")
    .option("--keep", "keep the temporary project afterwards, to look around in it (default: removed)")
    .exitOverride()
    .action((opts: { keep?: boolean }) =>
      done(import("./commands/demo.js").then((m) => m.demoCommand(opts.keep === true))),
    );
  program
    .command("init")
    .description("scaffold PROMPT.md, ralph.yaml, TASKS.md and a .gitignore entry for .ralph/")
    .exitOverride()
    .action(() => done(import("./commands/init.js").then((m) => m.initCommand(process.cwd()))));
  const cwd = findProject(process.cwd());
  program
    .command("status")
    .description("one run: state, iteration, spend, current task, last events")
    .argument("[run]", "run id (default: the single active run, else the latest)")
    .option("--json", "print the status as JSON")
    .exitOverride()
    .action((run: string | undefined, opts: { json?: boolean }) =>
      done(import("./commands/inspect.js").then((m) => m.statusCommand(cwd, run, opts.json === true))),
    );
  program
    .command("list")
    .description("runs under .ralph/runs: id, state, iteration, spend, age")
    .option("--active", "only running, paused or waiting runs")
    .option("--json", "print the list as JSON")
    .exitOverride()
    .action((opts: { active?: boolean; json?: boolean }) =>
      done(import("./commands/inspect.js").then((m) => m.listCommand(cwd, opts.active === true, opts.json === true))),
    );
  program
    .command("stop")
    .description("stop a run at the next iteration boundary (creates its STOP file)")
    .argument("[run]", "run id (default: the single active run)")
    .option("--now", "end the current iteration too: the runner ends the agent at once")
    .exitOverride()
    .action((run: string | undefined, opts: { now?: boolean }) =>
      done(import("./commands/control.js").then((m) => m.stopCommand(cwd, run, opts.now === true))),
    );
  program
    .command("pause")
    .description("pause a run before its next iteration (creates its PAUSE file)")
    .argument("[run]", "run id (default: the single active run)")
    .exitOverride()
    .action((run: string | undefined) => done(import("./commands/control.js").then((m) => m.pauseCommand(cwd, run))));
  program
    .command("resume")
    .description("resume a paused run (removes its PAUSE file)")
    .argument("[run]", "run id (default: the single active run)")
    .exitOverride()
    .action((run: string | undefined) => done(import("./commands/control.js").then((m) => m.resumeCommand(cwd, run))));
  program
    .command("answer")
    .description(
      "answer the question a run is waiting on (its agent ended with <ask>QUESTION</ask>); the next prompt carries both",
    )
    .argument("[run]", "run id (default: the single run waiting for an answer)")
    .argument("[text]", "the answer (quote it); or give --file")
    .option("--file <file>", "read the answer from a file")
    .exitOverride()
    .action((first: string | undefined, second: string | undefined, opts: { file?: string }) =>
      done(import("./commands/answer.js").then((m) => m.answerCommand(cwd, first, second, opts.file, process.env))),
    );
  program
    .command("continue")
    .description("continue a finished, stopped or crashed run, keeping its counters, spend and history")
    .argument("[run]", "run id (default: the single active run, else the latest)")
    .addOption(
      declaredOption(runOption("maxIterations"), "new iteration cap (counted from the run's start; 0 = unlimited)"),
    )
    .addOption(declaredOption(runOption("maxCostUsd"), "new spend cap for the whole run, in US dollars"))
    .addOption(
      declaredOption(runOption("maxRuntimeMs"), "new cap on the run's total time since it first started, e.g. 2h"),
    )
    .addOption(declaredOption(runOption("json")))
    .addOption(declaredOption(runOption("live")))
    .exitOverride()
    .action((run: string | undefined, _opts: unknown, command: Command) =>
      done(import("./commands/continue.js").then((m) => m.continueCommand(cwd, run, command))),
    );
  program
    .command("set")
    .description(`change a run's desired state (state.md), also while it runs: ${SET_KEYS.join(", ")}`)
    .argument("[run]", "run id (default: the single active run)")
    .argument(
      "[changes...]",
      "key=value (check may repeat and replaces the checks; an empty value removes a promise or task list)",
    )
    .exitOverride()
    .action((run: string | undefined, changes: string[]) => {
      // A first word holding '=' is a change, never a run id (ids have no '='): RUN is optional.
      const [given, all] = run !== undefined && run.includes("=") ? [undefined, [run, ...changes]] : [run, changes];
      done(import("./commands/set.js").then((m) => m.setCommand(cwd, given, all, process.env)));
    });
  program
    .command("logs")
    .description("a run's story as --live shows it: iterations, the agent's messages and tool calls, decisions")
    .argument("[run]", "run id (default: the single active run, else the latest)")
    .option("-f, --follow", "follow the run until it ends")
    .option("--iteration <n>", "the agent's whole output in iteration N, from its iter-NNN.log")
    .exitOverride()
    .action((run: string | undefined, opts: { follow?: boolean; iteration?: string }) =>
      done(import("./commands/logs.js").then((m) => m.logsCommand(cwd, run, opts.follow === true, opts.iteration))),
    );
  program
    .command("ui")
    .description("a live web dashboard of this project's runs (or of each --project), on 127.0.0.1")
    .option("--port <n>", "port to listen on (default: any free port)")
    .option("--host <host>", "address to listen on (default 127.0.0.1; anything else is reachable by others)")
    .option(
      "--project <dir>",
      "a project to show (repeatable; default: the current directory)",
      (dir: string, dirs: string[] = []) => [...dirs, dir],
    )
    .exitOverride()
    .action((opts: { port?: string; host?: string; project?: string[] }) =>
      done(import("./commands/ui.js").then((m) => m.uiCommand(cwd, opts))),
    );
  program
    .command("tui")
    .description("a full-screen terminal UI: watch every run live and pause, stop, continue, set or answer them")
    .option(
      "--project <dir>",
      "a project to show (repeatable; default: the current directory)",
      (dir: string, dirs: string[] = []) => [...dirs, dir],
    )
    .exitOverride()
    .action((opts: { project?: string[] }) => done(import("./commands/tui.js").then((m) => m.tuiCommand(cwd, opts))));
  program
    .command("report")
    .description("what a reviewer needs: outcome, iterations, checks, commits, diffstat, child runs, open questions")
    .argument("[run]", "run id (default: the latest run)")
    .option("--format <format>", "md (default) or json")
    .action((run: string | undefined, opts: { format?: string }) =>
      done(import("./commands/report.js").then((m) => m.reportCommand(cwd, run, opts.format, process.env))),
    );
  program
    .command("spend")
    .description("what the agents spent, from ralph's spend ledger: by day, run, agent or model")
    .option("--since <period>", "how far back: 7d (default), 24h, 2w, 30m")
    .option("--by <key>", "day (default), run, agent or model")
    .option("--json", "machine-readable output (additive: the parts of a family run elsewhere add up)")
    .option("--all-projects", "every project of this user, not only the current one")
    .exitOverride()
    .action((opts: { since?: string; by?: string; json?: boolean; allProjects?: boolean }) =>
      done(import("./commands/spend.js").then((m) => m.spendCommand(cwd, opts, process.env))),
    );
  program
    .command("land")
    .description("deliver a run's branch, only as asked: merge it into your current branch, or --push it (and --pr)")
    .argument("[run]", "run id (default: the latest run)")
    .option(
      "--push <remote>",
      "push the run's branch to REMOTE (REMOTE:BRANCH names the branch there) instead of merging it here",
    )
    .option(
      "--pr",
      "with --push: open a pull request with the report as its body through gh, against the branch the run started from",
    )
    .option("--force", "merge even though you are on another branch than the run started from (or a detached HEAD)")
    .action((run: string | undefined, opts: { push?: string; pr?: boolean; force?: boolean }) =>
      done(import("./commands/land.js").then((m) => m.landCommand(cwd, run, opts, process.env))),
    );
  program
    .command("clean")
    .description(
      "remove ended runs' worktrees (.ralph/worktrees/RUN; a --parallel parent's with its children's); their branches ralph/RUN are kept",
    )
    .argument("[runs...]", "run ids")
    .option("--ended", "every ended run's worktree")
    .option("--force", "remove them even with uncommitted changes in them (they are lost)")
    .exitOverride()
    .action((runs: string[], opts: { force?: boolean; ended?: boolean }) =>
      done(
        import("./commands/clean.js").then((m) => m.cleanCommand(cwd, runs, opts.force === true, opts.ended === true)),
      ),
    );
  program
    .command("doctor")
    .description(
      "how agent trees are supervised here and why, the agent CLIs found, Node's version, orphaned worktrees",
    )
    .option("--json", "machine-readable output")
    .exitOverride()
    .action((opts: { json?: boolean }) =>
      done(import("./commands/doctor.js").then((m) => m.doctorCommand(cwd, opts.json === true))),
    );
  if (hook) hook.registerHookCommand(program, trailing, done);
  else
    program
      .command("hook")
      .description(
        "in-session loop through a Claude Code Stop hook: start, cancel, install, uninstall (handle is the hook itself)",
      );
  return program;
}
