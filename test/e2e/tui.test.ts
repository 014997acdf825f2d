// `ralph tui` in a real pseudo-terminal against real runs (command agents and the demo agent), its screen read
// back through a headless terminal emulator: runs show and change state live, each key does what it says
// through the shared run control and a key that does not apply does nothing, an answer typed here reaches
// the agent's next prompt, and leaving (q, SIGHUP) gives the terminal back and leaves every run going.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, fakeAgent, processAlive, readStatus, runRalph, tempProjects, trackedStarts, waitUntil } from "../helpers/cli.js";
import { isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";
import { startTui, type TuiTerminal } from "../helpers/tui-terminal.js";

after(isolateGitConfig());
const project = tempProjects("ralph-tui-");
const start = trackedStarts();
const tuis: TuiTerminal[] = [];
after(() => tuis.forEach((tui) => tui.running() && tui.pty.kill("SIGKILL")));

const ENTER_ALT = "\x1b[?1049h";
const LEAVE_ALT = "\x1b[?1049l";
const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const state = (dir: string, id: string) => (existsSync(join(runDir(dir, id), "status.json")) ? String(readStatus(runDir(dir, id)).state) : "");
/** The control files a person's request leaves in a run directory. */
const controlFiles = (dir: string, id: string) => ["STOP", "PAUSE", "ANSWER"].filter((name) => existsSync(join(runDir(dir, id), name)));
const runnerPid = (dir: string, id: string) => Number(readStatus(runDir(dir, id)).pid);

function tui(dir: string, columns = 120, rows = 32): TuiTerminal {
  const started = startTui(dir, [], columns, rows);
  tuis.push(started);
  return started;
}

/** A run whose agent works 300 ms an iteration, for up to 500 iterations. */
async function liveRun(dir: string, id: string): Promise<void> {
  start(dir, ["run", "--name", id, "-n", "500", "work", ...fakeAgent("--print", "working hard", "--sleep", "300")]);
  await waitUntil(() => state(dir, id) === "running", `run ${id} to be running`);
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
    await t.waitFor((screen) => screen.includes("pause requested: run live waits before its next iteration"), "the pause message");
    assert.equal(existsSync(join(runDir(dir, "live"), "PAUSE")), true);
    await t.waitFor((screen) => /› live\s+paused/.test(screen), "the run shown paused");
    t.type("p");
    await t.waitFor((screen) => screen.includes("p: run live is already paused (or pausing)"), "pause refused on a paused run");
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
    await again.waitFor((screen) => screen.includes("s: run live has already ended (STOPPED); nothing to stop"), "stop refused on an ended run");
    again.type("q");
    await again.exited;
  });

  test("S asks first: n changes nothing, y stops the run now", async () => {
    const dir = project();
    await liveRun(dir, "now");
    const t = tui(dir);
    await t.waitFor((screen) => /› now\s+running/.test(screen), "the run");
    t.type("S");
    await t.waitFor((screen) => screen.includes("stop run now NOW, ending its agent mid-iteration? y/n"), "the confirmation");
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
    start(dir, ["run", "--name", "q", "-n", "5", "--completion-promise", "FIN", "build it", ...fakeAgent("--record", record, "--ask", "Which database?", "--ask-in", "1", "--promise", "FIN", "--promise-from", "2")]);
    const t = tui(dir);
    await t.waitFor((screen) => screen.includes("? q asks: Which database?") && /› q\s+needs_human/.test(screen), "the open question");
    t.type("a");
    await t.waitFor((screen) => screen.includes("answer q> "), "the answer box");
    t.type("Postgres 16\r");
    await waitUntil(() => state(dir, "q") === "ended", "the run to end");
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

  test("the agent's escape sequences arrive escaped, in the run view's output", async () => {
    const dir = project();
    await runRalph(["run", "--name", "esc", "-n", "1", "go", ...fakeAgent("--print", "before\x1b[2J\x1b]52;c;aGVsbG8=\x07after")], dir);
    const t = tui(dir);
    await t.waitFor((screen) => /› esc\s+MAX_ITERATIONS/.test(screen), "the run");
    t.type("\r");
    const screen = await t.waitFor((text) => text.includes("before\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07after"), "the output with its controls written out");
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
    await t.waitFor((screen) => /› again\s+MAX_ITERATIONS\s+2\/2/.test(screen), "the run continued to its new cap", 40_000);
    t.type("q");
    await t.exited;
  });

  test("a --parallel parent folds its children under it", async () => {
    const repo = storiesRepo();
    const env = cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
    const result = await runRalph(["run", "--agent", "demo", "--tasks", "prd.json", "--parallel", "2", "--name", "par", "work"], repo, env, 120_000);
    assert.equal(result.code, 0, result.stderr);
    const t = tui(repo);
    const screen = await t.waitFor((text) => /› ▾ par\s/.test(text) && (text.match(/ └ par-/g) ?? []).length === 3, "the parent and its three children under it");
    const lines = screen.split("\n");
    const parentAt = lines.findIndex((line) => /▾ par\s/.test(line));
    assert.ok(lines.slice(parentAt + 1, parentAt + 4).every((line) => line.includes("└ par-")), "the children right under their parent");
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
    await t.waitFor((screen) => /› small\s+MAX_ITERATIONS/.test(screen) && lastRow(screen).includes("? help q quit"), "the runs at 160×48");
    t.resize(80, 24);
    await t.waitFor((screen) => screen.split("\n").length === 24 && /› small\s+MAX_ITERATIONS/.test(screen) && lastRow(screen).startsWith("(p pause)"), "the runs at 80×24");
    t.resize(100, 30);
    await t.waitFor((screen) => screen.split("\n").length === 30 && lastRow(screen).startsWith("(p pause)"), "the key bar on the last row at 100×30");
    t.type("q");
    await t.exited;
    // Only the reset on leaving: no colour, bold or inverse anywhere.
    // eslint-disable-next-line no-control-regex -- looking for escape sequences is the point
    assert.doesNotMatch(t.raw(), /\x1b\[[0-9;]*[1-9][0-9;]*m/);
  });

  test("a terminal is required: without one, one line and exit 2", async () => {
    const dir = project();
    const piped = await runRalph(["tui"], dir);
    assert.deepEqual([piped.code, piped.stderr], [2, "ralph: tui: needs a terminal on stdin and stdout (for a script, use ralph list --json or ralph status --json)\n"]);
  });
});
