// `ralph tui` on a real pseudo-terminal, its screen read back through a headless terminal emulator: what a
// person would see, as text, after every escape sequence the TUI wrote has been carried out.
import { spawn, type IPty } from "@lydell/node-pty";
import xterm from "@xterm/headless";
import { RALPH, cleanEnv } from "./cli.js";
import { waitFor } from "./wait.js";

const { Terminal } = xterm;

/** A running `ralph tui` and its screen. */
export interface TuiTerminal {
  pty: IPty;
  /** The headless terminal the output is carried out in (its buffer and modes tell what state it was left in). */
  emulator: InstanceType<typeof Terminal>;
  /** Everything the TUI wrote, escape sequences and all. */
  raw(): string;
  /** The screen's rows as text (trailing spaces cut). */
  screen(): string[];
  /** Types `data` (keys as the terminal sends them). */
  type(data: string): void;
  /** Waits until the screen, between two frames, satisfies `test` (checked as output arrives), failing after `timeoutMs`. */
  waitFor(test: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  resize(columns: number, rows: number): void;
  exited: Promise<{ exitCode: number; signal: number | undefined }>;
  running(): boolean;
}

/** Starts `ralph tui ARGS` in `cwd` on a `columns`×`rows` pseudo-terminal; the caller ends it. */
export function startTui(
  cwd: string,
  args: string[] = [],
  columns = 120,
  rows = 32,
  env: NodeJS.ProcessEnv = cleanEnv(),
): TuiTerminal {
  return startInTerminal(process.execPath, [RALPH, "tui", ...args], cwd, columns, rows, env);
}

/** Starts `file ARGS` (argv, no shell string) in `cwd` on a `columns`×`rows` pseudo-terminal; the caller ends it. */
export function startInTerminal(
  file: string,
  args: string[],
  cwd: string,
  columns = 120,
  rows = 32,
  env: NodeJS.ProcessEnv = cleanEnv(),
): TuiTerminal {
  const term = new Terminal({ cols: columns, rows, allowProposedApi: true, scrollback: 0 });
  const pty = spawn(file, args, {
    cwd,
    env: { TERM: "xterm-256color", ...env } as Record<string, string>,
    cols: columns,
    rows,
    name: "xterm-256color",
  });
  let raw = "";
  /** What the emulator has carried out so far (raw may run ahead of it). */
  let shown = "";
  let pending = Promise.resolve();
  const waiters = new Set<() => void>();
  pty.onData((data) => {
    raw += data;
    pending = pending.then(() => new Promise<void>((resolve) => term.write(data, () => ((shown += data), resolve()))));
    void pending.then(() => waiters.forEach((wake) => wake()));
  });
  let running = true;
  const exited = new Promise<{ exitCode: number; signal: number | undefined }>((resolve) =>
    pty.onExit(({ exitCode, signal }) => {
      running = false;
      resolve({ exitCode, signal });
      waiters.forEach((wake) => wake());
    }),
  );
  const screen = () => {
    const buffer = term.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < term.rows; row++)
      lines.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? "");
    return lines;
  };
  return {
    pty,
    emulator: term,
    raw: () => raw,
    screen,
    type: (data) => pty.write(data),
    waitFor: (test, what, timeoutMs = 20_000) => {
      const check = (): string | null => {
        // Looked at once the emulator has carried out all output so far, between frames only, as a terminal
        // that honours synchronized output shows them.
        if (shown.length !== raw.length) return null;
        const text = screen().join("\n");
        const between = shown.lastIndexOf("\x1b[?2026l") >= shown.lastIndexOf("\x1b[?2026h");
        if (between && test(text)) return text;
        if (!running) throw new Error(`the TUI exited while waiting for ${what}; screen:\n${text}`);
        return null;
      };
      return waitFor(
        check,
        () => `${what}; screen:\n${screen().join("\n")}`,
        timeoutMs,
        (wake) => {
          waiters.add(wake);
          return () => waiters.delete(wake);
        },
      );
    },
    resize: (c, r) => {
      pty.resize(c, r);
      term.resize(c, r);
    },
    exited,
    running: () => running,
  };
}
