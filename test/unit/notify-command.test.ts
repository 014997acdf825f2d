// Command and desktop notifications with real processes: stdin, exit codes, process trees ended at their limit.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMMAND_LIMITS } from "../../src/notify/run-notify-command.js";
import { DEFAULT_NOTIFY_EVENTS, type NotifyTarget } from "../../src/notify/notify-target.js";
import { shellCommandLine } from "../../src/util/shell-words.js";
import { leadingWords, pinTable } from "../../src/store/pinned-program.js";
import { processAlive } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { notifierFor, runEnded } from "../fixtures/notify-harness.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-notify-"));
const leftovers: number[] = [];
after(() => {
  for (const pid of leftovers) if (processAlive(pid)) process.kill(pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** A command line (run with sh -c) from words, each quoted. */
function command(...argv: string[]): NotifyTarget {
  return { kind: "command", command: shellCommandLine(argv), events: DEFAULT_NOTIFY_EVENTS };
}

function node(script: string, ...args: string[]): NotifyTarget {
  return command(process.execPath, "-e", script, ...args);
}

// Starts a child that ignores SIGTERM (so only SIGKILL ends it), writes both pids to a file, then hangs.
const HANG = `
const { spawn } = require("node:child_process");
const child = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: "ignore" });
require("node:fs").writeFileSync(process.argv[1], JSON.stringify([process.pid, child.pid]));
setInterval(() => {}, 1000);
`;

/** Waits for the HANG tree's pid file and checks both processes run (the known-false control of "none left"). */
async function hangingTree(pids: string): Promise<number[]> {
  // The file appears before its text is written: wait for the whole list.
  await waitFor(() => existsSync(pids) && readFileSync(pids, "utf8").endsWith("]"), pids, 10_000);
  const tree = JSON.parse(readFileSync(pids, "utf8")) as number[];
  leftovers.push(...tree);
  assert.deepEqual(tree.map(processAlive), [true, true]);
  return tree;
}

describe("a notification script in the project is pinned when the run starts", () => {
  test("a script the agent rewrote is not run: the notification is skipped, saying why (the unpinned script runs the agent's code)", async () => {
    const project = mkdtempSync(join(dir, "pinned-"));
    const outside = join(dir, "written-outside");
    const script = join(project, "notify.sh");
    writeFileSync(script, "#!/bin/sh\ncat > /dev/null\n", { mode: 0o755 });
    const target: NotifyTarget = { kind: "command", command: "./notify.sh --quiet", events: DEFAULT_NOTIFY_EVENTS };
    const { notifier, failures, delivered } = notifierFor([target], { cwd: project });
    // What the sandboxed agent writes into the work tree; ralph would run it outside the sandbox.
    writeFileSync(script, `#!/bin/sh\necho pwned > "${outside}"\n`, { mode: 0o755 });
    notifier.notify(runEnded());
    await notifier.drain(10_000);
    assert.equal(existsSync(outside), false, "the rewritten script did not run");
    assert.equal(delivered.length, 0);
    assert.equal(failures.length, 1);
    assert.equal(
      failures[0]?.error,
      `not run: ${script} changed since the run started; ralph runs only the script as it was then`,
    );
    // Control: a notifier started after the rewrite (nothing pinned before it) runs the agent's script.
    const unpinned = notifierFor([target], { cwd: project });
    unpinned.notifier.notify(runEnded());
    await unpinned.notifier.drain(10_000);
    assert.equal(readFileSync(outside, "utf8"), "pwned\n");
  });

  test("a notifier started after the rewrite (ralph continue) pins the script as the run's record has it: the rewrite is not run", async () => {
    const project = mkdtempSync(join(dir, "pinned-"));
    const outside = join(dir, "written-outside-on-continue");
    const script = join(project, "notify.sh");
    writeFileSync(script, "#!/bin/sh\ncat > /dev/null\n", { mode: 0o755 });
    const target: NotifyTarget = { kind: "command", command: "./notify.sh", events: DEFAULT_NOTIFY_EVENTS };
    // What the run's record keeps from its creation; the agent rewrites the script before the run is continued.
    const pins = pinTable([leadingWords(target.command)], project, project);
    assert.deepEqual(Object.keys(pins), ["notify.sh"]);
    writeFileSync(script, `#!/bin/sh\necho pwned > "${outside}"\n`, { mode: 0o755 });
    const { notifier, failures, delivered } = notifierFor([target], { cwd: project, pins });
    notifier.notify(runEnded());
    await notifier.drain(10_000);
    assert.equal(existsSync(outside), false, "the rewritten script did not run");
    assert.equal(delivered.length, 0);
    assert.equal(
      failures[0]?.error,
      `not run: ${script} changed since the run started; ralph runs only the script as it was then`,
    );
    // Control: the same notifier without the record's pins (pinned again now) runs the agent's script.
    const repinned = notifierFor([target], { cwd: project });
    repinned.notifier.notify(runEnded());
    await repinned.notifier.drain(10_000);
    assert.equal(readFileSync(outside, "utf8"), "pwned\n");
  });

  test("a script named but not there when the run started, written there later by the agent, is not run (pinned once there, it runs)", async () => {
    const project = mkdtempSync(join(dir, "pinned-"));
    const outside = join(dir, "written-outside-appeared");
    const target: NotifyTarget = { kind: "command", command: "sh hooks/notify.sh", events: DEFAULT_NOTIFY_EVENTS };
    const pins = pinTable([leadingWords(target.command)], project, project);
    assert.deepEqual(pins, { "hooks/notify.sh": null });
    const { notifier, failures, delivered } = notifierFor([target], { cwd: project, pins });
    mkdirSync(join(project, "hooks"));
    writeFileSync(join(project, "hooks", "notify.sh"), `echo pwned > "${outside}"\n`);
    notifier.notify(runEnded());
    await notifier.drain(10_000);
    assert.equal(existsSync(outside), false, "the script the agent wrote did not run");
    assert.equal(delivered.length, 0);
    assert.equal(
      failures[0]?.error,
      `not run: ${join(project, "hooks", "notify.sh")} was not there when the run started; ralph runs only the script as it was then`,
    );
    // Control: a notifier started once the agent's script is there (nothing pinned its absence) runs it.
    const late = notifierFor([target], { cwd: project });
    late.notifier.notify(runEnded());
    await late.notifier.drain(10_000);
    assert.equal(readFileSync(outside, "utf8"), "pwned\n");
  });

  test("`node scripts/notify.mjs` pins the script; a script unchanged, and `cat >> file`, run as before", async () => {
    const project = mkdtempSync(join(dir, "pinned-"));
    const out = join(project, "log.jsonl");
    writeFileSync(out, "");
    const { notifier, failures, delivered } = notifierFor(
      [{ kind: "command", command: "cat >> log.jsonl", events: DEFAULT_NOTIFY_EVENTS }],
      { cwd: project },
    );
    notifier.notify(runEnded());
    await notifier.drain(10_000);
    notifier.notify(runEnded());
    await notifier.drain(10_000);
    assert.deepEqual(failures, []);
    assert.equal(delivered.length, 2);
    assert.equal(readFileSync(out, "utf8").split("\n").filter(Boolean).length, 2);
  });
});

describe("command notifications", () => {
  test("a command gets the event JSON on stdin", async () => {
    const out = join(dir, "stdin.json");
    const { notifier, failures, delivered } = notifierFor([
      node("require('node:fs').writeFileSync(process.argv[1], require('node:fs').readFileSync(0))", out),
    ]);
    const event = runEnded();
    notifier.notify(event);
    await notifier.drain(20_000);
    assert.deepEqual(failures, []);
    assert.equal(delivered.length, 1);
    assert.deepEqual(JSON.parse(readFileSync(out, "utf8")), event);
    assert.ok(readFileSync(out, "utf8").endsWith("}\n"), "the JSON ends with a newline");
  });

  test("a command that fails or cannot start is reported", async () => {
    const { notifier, failures } = notifierFor([node("process.exit(3)"), command(join(dir, "no-such-notifier"))]);
    notifier.notify(runEnded());
    await notifier.drain(20_000);
    assert.deepEqual(failures.map((failure) => failure.error).sort(), [
      `exited with code 127: /bin/sh: 1: ${join(dir, "no-such-notifier")}: not found`,
      "exited with code 3",
    ]);
    assert.match(
      failures.find((failure) => failure.error === "exited with code 3")?.target ?? "",
      /^command .*node -e /,
    );
  });

  test("a command that hangs has its whole tree ended after its limit, leaving no process", async () => {
    assert.equal(COMMAND_LIMITS.limitMs, 10_000);
    const pids = join(dir, "hang.pids");
    const { notifier, failures } = notifierFor([node(HANG, pids)], { command: { limitMs: 3000, graceMs: 300 } });
    notifier.notify(runEnded());
    const tree = await hangingTree(pids);
    await notifier.drain(20_000);
    assert.equal(failures.length, 1);
    assert.match(failures[0]?.error ?? "", /^did not finish within 3000 ms; its tree was ended \(3 process\(es\)\)$/);
    assert.deepEqual(tree.map(processAlive), [false, false]);
  });

  test("drain() returns by its bound while a command hangs, and ends its tree", async () => {
    const pids = join(dir, "drain.pids");
    const { notifier, failures } = notifierFor([node(HANG, pids)], { command: { limitMs: 60_000, graceMs: 5000 } });
    notifier.notify(runEnded());
    const tree = await hangingTree(pids);
    const started = performance.now();
    const report = await notifier.drain(200);
    const took = performance.now() - started;
    assert.deepEqual(report, { settled: 0, abandoned: 1 });
    assert.ok(took < 5000, `drain took ${Math.round(took)} ms against a 60 s limit and 5 s grace`);
    assert.match(failures[0]?.error ?? "", /^abandoned: the run was exiting; its tree was ended/);
    assert.deepEqual(tree.map(processAlive), [false, false]);
  });
});

describe("a signal during drain()", () => {
  test("cuts a long drain short: the wait ends within the hurry bound once the signal aborts", async () => {
    const pids = join(dir, "hurry.pids");
    const { notifier, failures } = notifierFor([node(HANG, pids)], { command: { limitMs: 60_000, graceMs: 5000 } });
    notifier.notify(runEnded());
    const tree = await hangingTree(pids);
    const signal = new AbortController();
    const started = performance.now();
    setTimeout(() => signal.abort(), 100);
    const report = await notifier.drain(20_000, { signal: signal.signal, withinMs: 300 });
    const took = performance.now() - started;
    assert.deepEqual(report, { settled: 0, abandoned: 1 });
    assert.ok(took < 3000, `drain took ${Math.round(took)} ms with a 20 s bound, hurried after 100 ms to 300 ms`);
    assert.match(failures[0]?.error ?? "", /^abandoned: the run was exiting/);
    assert.deepEqual(tree.map(processAlive), [false, false]);
  });

  test("control: without the signal the same drain waits for its bound", async () => {
    const pids = join(dir, "patient.pids");
    const { notifier } = notifierFor([node(HANG, pids)], { command: { limitMs: 60_000, graceMs: 5000 } });
    notifier.notify(runEnded());
    await hangingTree(pids);
    const started = performance.now();
    await notifier.drain(1500, { signal: new AbortController().signal, withinMs: 300 });
    assert.ok(performance.now() - started >= 1450, "the drain waited its whole bound");
  });
});

describe("desktop notifications", () => {
  function fakeNotifier(name: string): { path: string; out: string } {
    const bin = mkdtempSync(join(dir, "bin-"));
    const out = join(bin, "args");
    writeFileSync(join(bin, name), `#!/bin/sh\nprintf '%s\\n' "$@" > '${out}'\n`, { mode: 0o755 });
    return { path: bin, out };
  }

  test("notify-send shows the title and the one-line summary", async () => {
    const fake = fakeNotifier("notify-send");
    const { notifier, failures } = notifierFor([{ kind: "desktop", events: DEFAULT_NOTIFY_EVENTS }], {
      env: { PATH: fake.path },
      platform: "linux",
    });
    notifier.notify({ v: 1, ts: "t", run: "r1", type: "needs_human", question: "Postgres or SQLite?" });
    await notifier.drain(20_000);
    assert.deepEqual(failures, []);
    assert.deepEqual(readFileSync(fake.out, "utf8").split("\n").slice(1), [
      "--",
      "ralph: needs a person",
      "ralph run r1 needs a person: Postgres or SQLite?",
      "",
    ]);
  });

  test("osascript gets the text as arguments, never inside the script", async () => {
    const fake = fakeNotifier("osascript");
    const { notifier, failures } = notifierFor([{ kind: "desktop", events: DEFAULT_NOTIFY_EVENTS }], {
      env: { PATH: fake.path },
      platform: "darwin",
    });
    notifier.notify(runEnded("DONE", 'r"; do shell script "x'));
    await notifier.drain(20_000);
    assert.deepEqual(failures, []);
    const args = readFileSync(fake.out, "utf8");
    assert.match(args, /^-e\non run argv\n/);
    assert.ok(args.includes('\nralph: DONE\nralph run r"; do shell script "x: ended DONE (exit 0): ended done\n'));
  });

  test("no notify-send on PATH is a failure event, not a crash", async () => {
    const empty = mkdtempSync(join(dir, "empty-"));
    const { notifier, failures } = notifierFor([{ kind: "desktop", events: DEFAULT_NOTIFY_EVENTS }], {
      env: { PATH: empty },
      platform: "linux",
    });
    notifier.notify(runEnded());
    await notifier.drain(20_000);
    assert.deepEqual(failures, [
      {
        target: "desktop",
        event: "run_ended",
        error: "desktop notifications need notify-send, which is not on PATH",
        attempts: 0,
      },
    ]);
  });
});
