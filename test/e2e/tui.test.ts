// `ralph tui` in a real pseudo-terminal against real runs (command agents and the demo agent), its screen read
// back through a headless terminal emulator: runs show and change state live, each key does what it says
// through the shared run control and a key that does not apply does nothing, an answer typed here reaches
// the agent's next prompt, and leaving (q, SIGHUP) gives the terminal back and leaves every run going.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import {
  agentAfter,
  cleanEnv,
  fakeAgent,
  processAlive,
  RALPH,
  readStatus,
  runRalph,
  tempProjects,
  trackedStarts,
} from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";
import { startInTerminal, startTui, type TuiTerminal } from "../helpers/tui-terminal.js";

after(isolateGitConfig());
const project = tempProjects("ralph-tui-");
const start = trackedStarts();
const tuis: TuiTerminal[] = [];
/** TUIs started under a shell on the terminal: a failed test leaves them to be ended here, by pid. */
const shellTuis: number[] = [];
after(() => {
  tuis.forEach((tui) => tui.running() && tui.pty.kill("SIGKILL"));
  shellTuis.forEach((pid) => processAlive(pid) && process.kill(pid, "SIGKILL"));
});

const ENTER_ALT = "\x1b[?1049h";
const LEAVE_ALT = "\x1b[?1049l";
const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const state = (dir: string, id: string) =>
  existsSync(join(runDir(dir, id), "status.json")) ? String(readStatus(runDir(dir, id)).state) : "";
/** The control files a person's request leaves in a run directory. */
const controlFiles = (dir: string, id: string) =>
  ["STOP", "PAUSE", "ANSWER"].filter((name) => existsSync(join(runDir(dir, id), name)));
const runnerPid = (dir: string, id: string) => Number(readStatus(runDir(dir, id)).pid);

function tui(dir: string, columns = 120, rows = 32): TuiTerminal {
  const started = startTui(dir, [], columns, rows);
  tuis.push(started);
  return started;
}

/** The pids of `parent`'s children (from /proc). */
function childrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** A run whose agent works 300 ms an iteration, for up to 500 iterations. */
async function liveRun(dir: string, id: string): Promise<void> {
  start(dir, ["run", "--name", id, "-n", "500", "work", ...fakeAgent("--print", "working hard", "--sleep", "300")]);
  await waitFor(() => state(dir, id) === "running", `run ${id} to be running`);
}

/** Ends a live run the test left going, through ralph itself. */
async function stopRun(dir: string, id: string): Promise<void> {
  await runRalph(["stop", id, "--now"], dir);
}

describe("ralph tui", () => {
  test("runs appear and change state live; p, r and s act through the shared control; a disabled key does nothing; q leaves the run going", async () => {
    const dir = project();
    const t = tui(dir);
    await t.waitFor((screen) => screen.includes("no runs yet"), "the empty list");
    await liveRun(dir, "live");
    await t.waitFor((screen) => /› live\s+running\s+\d+\/500/.test(screen), "the new run, running, selected");
    // r on a run that is not paused: shown disabled, does nothing, says the CLI's own words.
    t.type("r");
    await t.waitFor((screen) => screen.includes("r: run live is not paused; nothing to resume"), "the refusal");
    assert.equal(existsSync(join(runDir(dir, "live"), "PAUSE")), false);
    t.type("p");
    await t.waitFor(
      (screen) => screen.includes("pause requested: run live waits before its next iteration"),
      "the pause message",
    );
    assert.equal(existsSync(join(runDir(dir, "live"), "PAUSE")), true);
    await t.waitFor((screen) => /› live\s+paused/.test(screen), "the run shown paused");
    t.type("p");
    await t.waitFor(
      (screen) => screen.includes("p: run live is already paused (or pausing)"),
      "pause refused on a paused run",
    );
    t.type("r");
    await t.waitFor((screen) => /› live\s+running/.test(screen), "the run running again");
    assert.equal(existsSync(join(runDir(dir, "live"), "PAUSE")), false);
    t.type("q");
    const exit = await t.exited;
    assert.equal(exit.exitCode, 0);
    assert.ok(t.raw().lastIndexOf(LEAVE_ALT) > t.raw().indexOf(ENTER_ALT), "the alternate screen is left");
    assert.deepEqual(controlFiles(dir, "live"), [], "q never affects a run: no STOP, PAUSE or ANSWER");
    assert.equal(state(dir, "live"), "running");
    assert.ok(processAlive(runnerPid(dir, "live")), "its runner goes on");
    // s: stop at the boundary, the run ends STOPPED and the TUI shows it.
    const again = tui(dir);
    await again.waitFor((screen) => /› live\s+running/.test(screen), "the run listed again");
    again.type("s");
    await again.waitFor((screen) => /› live\s+STOPPED/.test(screen), "the run shown STOPPED");
    again.type("s");
    await again.waitFor(
      (screen) => screen.includes("s: run live has already ended (STOPPED); nothing to stop"),
      "stop refused on an ended run",
    );
    again.type("q");
    await again.exited;
  });

  test("S asks first: n changes nothing, y stops the run now", async () => {
    const dir = project();
    await liveRun(dir, "now");
    const t = tui(dir);
    await t.waitFor((screen) => /› now\s+running/.test(screen), "the run");
    t.type("S");
    await t.waitFor(
      (screen) => screen.includes("stop run now NOW, ending its agent mid-iteration? y/n"),
      "the confirmation",
    );
    t.type("n");
    await t.waitFor((screen) => screen.includes("stop now: cancelled"), "the cancel");
    assert.equal(existsSync(join(runDir(dir, "now"), "STOP")), false);
    t.type("S");
    await t.waitFor((screen) => screen.includes("y/n"), "the confirmation again");
    t.type("y");
    await t.waitFor((screen) => /› now\s+STOPPED/.test(screen), "the run stopped");
    t.type("q");
    await t.exited;
  });

  test("an answer typed in the TUI reaches the agent's next prompt", async () => {
    const dir = project();
    const record = join(dir, "prompts");
    start(dir, [
      "run",
      "--name",
      "q",
      "-n",
      "5",
      "--completion-promise",
      "FIN",
      "build it",
      ...fakeAgent(
        "--record",
        record,
        "--ask",
        "Which database?",
        "--ask-in",
        "1",
        "--promise",
        "FIN",
        "--promise-from",
        "2",
      ),
    ]);
    const t = tui(dir);
    const asking = await t.waitFor(
      (screen) => screen.includes("? q asks: Which database?") && /› q\s+needs_human/.test(screen),
      "the open question",
    );
    // The run's row is marked in the ? column (after ITER, SPEND, TOKENS and AGE).
    assert.match(asking, /› q\s+needs_human\s+1\/5\s+no cost\s+0\s+\S+\s+\? /);
    t.type("a");
    await t.waitFor((screen) => screen.includes("answer q> "), "the answer box");
    t.type("Postgres 16\r");
    await waitFor(() => state(dir, "q") === "ended", "the run to end");
    const prompts = readFileSync(record, "utf8").split("\0").slice(0, -1);
    assert.match(prompts[1] ?? "", /You asked: Which database\?\n\nAnswer: Postgres 16\n$/);
    t.type("q");
    await t.exited;
  });

  test("SIGHUP (the connection dropped) gives the terminal back and leaves the runs going", async () => {
    const dir = project();
    await liveRun(dir, "hup");
    const t = tui(dir);
    await t.waitFor((screen) => /› hup\s+running/.test(screen), "the run");
    t.pty.kill("SIGHUP");
    const exit = await t.exited;
    assert.notEqual(exit.exitCode, 1, "no crash");
    const raw = t.raw();
    assert.ok(raw.lastIndexOf(LEAVE_ALT) > raw.indexOf(ENTER_ALT), "the alternate screen is left");
    assert.ok(raw.lastIndexOf("\x1b[?25h") > raw.indexOf(ENTER_ALT), "the cursor is shown again");
    assert.deepEqual(controlFiles(dir, "hup"), []);
    assert.equal(state(dir, "hup"), "running");
    assert.ok(processAlive(runnerPid(dir, "hup")));
    await stopRun(dir, "hup");
  });

  test("the terminal closing under it (the connection dropped) ends it without a crash, the runs going on", async () => {
    const dir = project();
    await liveRun(dir, "drop");
    const t = tui(dir);
    await t.waitFor((screen) => /› drop\s+running/.test(screen), "the run");
    const tuiPid = t.pty.pid;
    // The far end goes: the terminal's master side is closed (the kernel hangs up the TUI's session), and
    // every write the TUI then makes to restore the terminal fails.
    (t.pty as unknown as { destroy(): void }).destroy();
    await waitFor(() => !processAlive(tuiPid), "the TUI to end");
    const exit = await t.exited;
    // Ended by the hang-up, as any program on a dropped connection: not aborted by a failed terminal reset
    // (SIGABRT) nor a crash (exit 1).
    assert.deepEqual(exit, { exitCode: 0, signal: 1 });
    assert.deepEqual(controlFiles(dir, "drop"), []);
    assert.equal(state(dir, "drop"), "running");
    assert.ok(processAlive(runnerPid(dir, "drop")));
    await stopRun(dir, "drop");
  });

  test("the agent's escape sequences arrive escaped, in the run view's output", async () => {
    const dir = project();
    await runRalph(
      ["run", "--name", "esc", "-n", "1", "go", ...fakeAgent("--print", "before\x1b[2J\x1b]52;c;aGVsbG8=\x07after")],
      dir,
    );
    const t = tui(dir);
    await t.waitFor((screen) => /› esc\s+MAX_ITERATIONS/.test(screen), "the run");
    t.type("\r");
    const screen = await t.waitFor(
      (text) => text.includes("before\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07after"),
      "the output with its controls written out",
    );
    assert.ok(screen.includes("── agent output"));
    assert.ok(!t.raw().includes("\x1b]52;"), "no clipboard write reached the terminal");
    assert.ok(!t.raw().includes("before\x1b[2J"), "no screen clear from the agent reached the terminal");
    t.type("\x1b");
    await t.waitFor((text) => text.includes("RUN") && text.includes("STATE"), "back to the runs");
    t.type("q");
    await t.exited;
  });

  test("e sets through ralph set; c continues the run with a new cap", async () => {
    const dir = project();
    await runRalph(["run", "--name", "again", "-n", "1", "go", ...fakeAgent("--print", "hi")], dir);
    const t = tui(dir);
    await t.waitFor((screen) => /› again\s+MAX_ITERATIONS\s+1\/1/.test(screen), "the ended run");
    t.type("e");
    await t.waitFor((screen) => screen.includes("set again (key=value ...)> "), "the set box");
    t.type("completion_promise=ALLDONE\r");
    await t.waitFor((screen) => screen.includes("run again: set completion_promise"), "set's own line");
    assert.match(readFileSync(join(runDir(dir, "again"), "state.md"), "utf8"), /ALLDONE/);
    t.type("c");
    await t.waitFor((screen) => screen.includes("new iteration cap"), "the continue box");
    t.type("2\r");
    await t.waitFor(
      (screen) => /› again\s+MAX_ITERATIONS\s+2\/2/.test(screen),
      "the run continued to its new cap",
      40_000,
    );
    t.type("q");
    await t.exited;
  });

  test("f filters by state, t sorts, ? lists the keys with why each is off, l shows the run log, o the report", async () => {
    const dir = project();
    await runRalph(["run", "--name", "ended", "-n", "1", "go", ...fakeAgent("--print", "all said")], dir);
    await liveRun(dir, "going");
    const t = tui(dir);
    const listedRuns = (screen: string) =>
      screen.split("\n").flatMap((line) => /^[› ] (ended|going)\s/.exec(line)?.[1] ?? []);
    await t.waitFor(
      (screen) => listedRuns(screen).join() === "going,ended" && screen.includes("filter all (f) · sort age (t)"),
      "both runs, newest first",
    );
    t.type("f");
    await t.waitFor(
      (screen) => screen.includes("filter active") && listedRuns(screen).join() === "going",
      "only the live run",
    );
    t.type("f");
    await t.waitFor(
      (screen) => screen.includes("filter asking") && screen.includes("no asking runs (f: change the filter)"),
      "no run asking",
    );
    t.type("f");
    await t.waitFor(
      (screen) => screen.includes("filter ended") && listedRuns(screen).join() === "ended",
      "only the ended run",
    );
    t.type("f");
    await t.waitFor((screen) => screen.includes("filter all") && listedRuns(screen).length === 2, "all runs again");
    t.type("t");
    await t.waitFor((screen) => screen.includes("sort spend (t)"), "sorted by spend");
    t.type("t");
    await t.waitFor((screen) => screen.includes("sort age (t)"), "sorted by age again");
    // ? on the live run: the keys that apply, and for each one that does not, the shared precondition's words.
    t.type("g");
    await t.waitFor((screen) => /› going\s/.test(screen), "the live run selected");
    t.type("?");
    const help = await t.waitFor((screen) => screen.includes("On run going:"), "the keys");
    assert.match(help, /p {2}pause\s+available/);
    assert.match(help, /r {2}resume\s+disabled: run going is not paused; nothing to resume/);
    assert.match(help, /c {2}continue\s+disabled: run going is live \(pid \d+\); stop it first with ralph stop going/);
    assert.match(help, /a {2}answer\s+disabled: run going is not waiting for an answer \(running\); nothing to answer/);
    t.type("x");
    await t.waitFor(
      (screen) => !screen.includes("On run going:") && /› going\s/.test(screen),
      "the help closed by any key",
    );
    t.type("j");
    await t.waitFor((screen) => /› ended\s/.test(screen), "the ended run selected");
    t.type("\r");
    await t.waitFor(
      (screen) => /── agent output ── lines \d+-\d+ of \d+/.test(screen) && screen.includes("all said"),
      "its output",
    );
    t.type("l");
    const log = await t.waitFor((screen) => /── run log ── lines \d+-\d+ of \d+/.test(screen), "its run log");
    const runLog = readFileSync(join(runDir(dir, "ended"), "run.log"), "utf8")
      .trim()
      .split("\n");
    assert.ok(log.includes((runLog.at(-1) ?? "").slice(0, 60)), "the log's last line shows");
    t.type("o");
    const report = await t.waitFor(
      (screen) => screen.includes("── report ──") && screen.includes("# ralph run ended: MAX_ITERATIONS"),
      "its report",
    );
    assert.ok(!report.includes("reading the report"));
    t.type("\x1b");
    await t.waitFor((screen) => screen.includes("── agent output"), "back from the report to the output");
    t.type("\x1b");
    await t.waitFor((screen) => listedRuns(screen).length === 2, "back to the runs");
    t.type("q");
    await t.exited;
    assert.equal(state(dir, "going"), "running", "nothing here touched the live run");
    await stopRun(dir, "going");
  });

  test("home scrolls back through a long run, reading it a window at a time", async () => {
    const dir = project();
    // About 1600 output events of 4000 characters each over three iterations: more than one window.
    const script = "head -c 2100000 /dev/zero | tr '\\0' x | fold -w 4000; echo";
    const long = await runRalph(
      ["run", "--name", "long", "-n", "3", "go", ...agentAfter(script, "--print", "iteration over")],
      dir,
      undefined,
      120_000,
    );
    assert.equal(long.code, 3, long.stderr);
    const t = tui(dir);
    await t.waitFor((screen) => /› long\s+MAX_ITERATIONS/.test(screen), "the run");
    t.type("\r");
    await t.waitFor(
      (screen) => /── agent output ── lines \d+-\d+ of \d+\+ · following/.test(screen),
      "the run's end, with more before it (+)",
    );
    t.type("g");
    await t.waitFor(
      (screen) => /── agent output ── lines \d+-\d+ of \d+ ──/.test(screen),
      "the rest read back: nothing more before it",
    );
    t.type("g");
    const top = await t.waitFor((screen) => /── agent output ── lines 1-\d+ of \d+ ──/.test(screen), "the first line");
    assert.ok(top.includes("── iteration 1/3 ──"));
    t.type("q");
    await t.exited;
  });

  test("a --parallel parent folds its children under it", async () => {
    const repo = storiesRepo();
    const env = cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
    const result = await runRalph(
      ["run", "--agent", "demo", "--tasks", "prd.json", "--parallel", "2", "--name", "par", "work"],
      repo,
      env,
      120_000,
    );
    assert.equal(result.code, 0, result.stderr);
    const t = tui(repo);
    const screen = await t.waitFor(
      (text) => /› ▾ par\s/.test(text) && (text.match(/ └ par-/g) ?? []).length === 3,
      "the parent and its three children under it",
    );
    const lines = screen.split("\n");
    const parentAt = lines.findIndex((line) => /▾ par\s/.test(line));
    assert.ok(
      lines.slice(parentAt + 1, parentAt + 4).every((line) => line.includes("└ par-")),
      "the children right under their parent",
    );
    t.type(" ");
    await t.waitFor((text) => /› ▸ par \(\+3\)/.test(text) && !text.includes("└ par-"), "the children folded away");
    t.type(" ");
    await t.waitFor((text) => (text.match(/ └ par-/g) ?? []).length === 3, "unfolded again");
    t.type("q");
    await t.exited;
  });
});

describe("ralph tui: terminal manners", () => {
  test("redrawn whole on resize, from 80×24 up; NO_COLOR writes no colour", async () => {
    const dir = project();
    await runRalph(["run", "--name", "small", "-n", "1", "go", ...fakeAgent("--print", "hi")], dir);
    const t = startTui(dir, [], 160, 48, cleanEnv({ NO_COLOR: "1" }));
    tuis.push(t);
    const lastRow = (screen: string) => screen.split("\n").at(-1) ?? "";
    await t.waitFor(
      (screen) => /› small\s+MAX_ITERATIONS/.test(screen) && lastRow(screen).includes("? help q quit"),
      "the runs at 160×48",
    );
    t.resize(80, 24);
    await t.waitFor(
      (screen) =>
        screen.split("\n").length === 24 &&
        /› small\s+MAX_ITERATIONS/.test(screen) &&
        lastRow(screen).startsWith("(p pause)"),
      "the runs at 80×24",
    );
    t.resize(100, 30);
    await t.waitFor(
      (screen) => screen.split("\n").length === 30 && lastRow(screen).startsWith("(p pause)"),
      "the key bar on the last row at 100×30",
    );
    t.type("q");
    await t.exited;
    // Only the reset on leaving: no colour, bold or inverse anywhere.
    // eslint-disable-next-line no-control-regex -- looking for escape sequences is the point
    assert.doesNotMatch(t.raw(), /\x1b\[[0-9;]*[1-9][0-9;]*m/);
  });

  // Each way out, with a shell on the same terminal after it (as a person has): the shell's own words show
  // on the normal screen, with line wrap and the cursor back, and `stty -a` finds the line discipline cooked
  // again (canonical input, echo), not raw. The shell then waits for a line, so nothing is read after it ends.
  for (const [way, leave] of [
    ["q", (t: TuiTerminal) => t.type("q")],
    ["ctrl-c", (t: TuiTerminal) => t.type("\x03")],
    ["SIGHUP", (t: TuiTerminal, tuiPid: number) => process.kill(tuiPid, "SIGHUP")],
    ["SIGTERM", (t: TuiTerminal, tuiPid: number) => process.kill(tuiPid, "SIGTERM")],
  ] as const) {
    test(`${way} gives the terminal back: normal screen, cursor, line wrap, cooked input`, async () => {
      const dir = project();
      const script = '"$0" "$1" tui; echo "tui exited $?"; stty -a; echo "shell back"; read line';
      const t = startInTerminal("sh", ["-c", script, process.execPath, RALPH], dir, 100, 30);
      tuis.push(t);
      await t.waitFor(
        (screen) => screen.includes("no runs yet") && (screen.split("\n").at(-1) ?? "").includes("enter open"),
        "the TUI",
      );
      assert.equal(t.emulator.buffer.active.type, "alternate");
      const [tuiPid] = childrenOf(t.pty.pid);
      assert.ok(tuiPid, "the TUI runs under the shell");
      shellTuis.push(tuiPid as number);
      leave(t, tuiPid as number);
      const screen = await t.waitFor((text) => text.includes("shell back"), "the shell after the TUI");
      assert.match(screen, new RegExp(`tui exited ${way === "SIGHUP" ? 129 : way === "SIGTERM" ? 143 : 0}\\b`));
      assert.equal(t.emulator.buffer.active.type, "normal", "the person's own screen is back");
      assert.equal(t.emulator.modes.wraparoundMode, true, "line wrap is back");
      const raw = t.raw();
      assert.ok(raw.lastIndexOf("\x1b[?25h") > raw.lastIndexOf("\x1b[?25l"), "the cursor is shown again");
      assert.match(screen, /(^|\s)icanon(\s|$)/m, "canonical input again");
      assert.match(screen, /(^|\s)echo(\s|$)/m, "echo again");
      assert.equal(processAlive(tuiPid as number), false);
      t.type("\r");
      assert.equal((await t.exited).exitCode, 0);
    });
  }

  test("--project shows the runs of several projects; a missing one is refused in one line", async () => {
    const shop = project();
    const blog = project();
    await runRalph(["run", "--name", "shoprun", "-n", "1", "go", ...fakeAgent("--print", "hi")], shop);
    await runRalph(["run", "--name", "blogrun", "-n", "1", "go", ...fakeAgent("--print", "hi")], blog);
    const t = startTui(shop, ["--project", shop, "--project", blog]);
    tuis.push(t);
    const screen = await t.waitFor(
      (text) => /shoprun\s+MAX_ITERATIONS/.test(text) && /blogrun\s+MAX_ITERATIONS/.test(text),
      "both projects' runs",
    );
    assert.ok(screen.includes(`${basename(shop)}, ${basename(blog)} · 2 runs`), "both projects named");
    t.type("q");
    await t.exited;
    const missing = join(shop, "no-such-dir");
    const refused = startTui(shop, ["--project", missing]);
    tuis.push(refused);
    assert.equal((await refused.exited).exitCode, 2);
    assert.equal(refused.raw().trim(), `ralph: --project ${missing}: expected a project directory`);
  });

  test("a terminal is required: without one, one line and exit 2", async () => {
    const dir = project();
    const piped = await runRalph(["tui"], dir);
    assert.deepEqual(
      [piped.code, piped.stderr],
      [
        2,
        "ralph: tui: needs a terminal on stdin and stdout (for a script, use ralph list --json or ralph status --json)\n",
      ],
    );
  });
});
