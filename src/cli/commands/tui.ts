// `ralph tui`: the terminal UI. Takes the terminal (raw mode, alternate screen) and gives it back as it was
// on every way out: q, Ctrl-C, SIGTERM, SIGHUP, SIGQUIT and a crash; a terminal that is gone (the SSH
// connection dropped) ends it of SIGHUP. Leaving
// never touches a run: the runs are other processes, and nothing here signals them.
import { existsSync, statSync } from "node:fs";
import { isatty } from "node:tty";
import { dieOfSignal } from "../../process/signals.js";
import { projectsOf } from "../../ui/projects.js";
import { parseKeys } from "../../tui/keys.js";
import { ENTER, LEAVE, Screen } from "../../tui/screen.js";
import { TuiApp } from "../../tui/tui-app.js";
import { UsageError } from "../usage-error.js";

const SIGNALS: Array<[NodeJS.Signals, number]> = [
  ["SIGTERM", 143],
  ["SIGHUP", 129],
  ["SIGINT", 130],
  ["SIGQUIT", 131],
];

/** `ralph tui [--project DIR...]`: resolves with the exit code once the person leaves. */
export async function tuiCommand(
  cwd: string,
  opts: { project?: string[] },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  if (!stdin.isTTY || !stdout.isTTY)
    throw new UsageError(
      "tui: needs a terminal on stdin and stdout (for a script, use ralph list --json or ralph status --json)",
    );
  const dirs = opts.project && opts.project.length > 0 ? opts.project : [cwd];
  for (const dir of dirs) {
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new UsageError(`--project ${dir}: expected a project directory`);
  }
  const projects = projectsOf(dirs);
  // https://no-color.org: any non-empty NO_COLOR turns colour off.
  const color = !env.NO_COLOR;
  let finish: (code: number) => void = () => undefined;
  const ended = new Promise<number>((resolve) => (finish = resolve));
  const write = (text: string) => {
    try {
      stdout.write(text);
    } catch {
      // The terminal is gone (a hang-up): nothing more to show.
    }
  };
  const screen = new Screen(write, color);
  // A terminal that hung up fails every later write (EIO): that ends the TUI quietly, never as a crash.
  stdout.removeAllListeners("error");
  stdout.on("error", () => finish(129));
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    try {
      stdin.setRawMode(false);
    } catch {
      // the terminal is gone
    }
    write(LEAVE);
  };
  const fixedNow = env.RALPH_TUI_NOW ? Date.parse(env.RALPH_TUI_NOW) : Number.NaN;
  const app = new TuiApp(projects, {
    size: () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 }),
    color,
    draw: (lines, cursor) => screen.draw(lines, cursor),
    quit: () => finish(0),
    now: () => (Number.isFinite(fixedNow) ? fixedNow : Date.now()),
  });
  const onData = (data: Buffer) => {
    for (const key of parseKeys(data.toString("utf8"))) app.key(key);
  };
  const onResize = () => {
    screen.invalidate();
    app.drawNow();
  };
  const onSignal = (code: number) => () => finish(code);
  const handlers = SIGNALS.map(([signal, code]) => [signal, onSignal(code)] as const);
  const onCrash = (error: unknown) => {
    restore();
    process.stderr.write(`ralph: internal error in the terminal UI: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  };
  process.on("exit", restore);
  process.on("uncaughtException", onCrash);
  process.on("unhandledRejection", onCrash);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  stdin.on("data", onData);
  stdout.on("resize", onResize);
  // A hang-up closes the terminal under us: reading it then ends or fails.
  stdin.on("end", () => finish(129));
  stdin.on("error", () => finish(129));
  try {
    stdin.setRawMode(true);
    stdin.resume();
    write(ENTER);
    app.drawNow();
    return await ended;
  } finally {
    app.close();
    stdin.off("data", onData);
    stdout.off("resize", onResize);
    for (const [signal, handler] of handlers) process.off(signal, handler);
    process.off("uncaughtException", onCrash);
    process.off("unhandledRejection", onCrash);
    restore();
    process.off("exit", restore);
    stdin.pause();
    // A terminal that hung up (the SSH connection dropped) answers every terminal call with an error: Node's
    // own reset of the terminal as the process exits then fails an assertion and aborts it (SIGABRT, a core
    // file). There is no terminal left to give back, so it ends as a hang-up ends any program: of SIGHUP.
    if (!isatty(0)) dieOfSignal("SIGHUP");
  }
}
