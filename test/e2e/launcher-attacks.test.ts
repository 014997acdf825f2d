// The subreaper launcher (one Perl per run forking every agent's subreaper) against a hostile agent: the same
// user, able to read /proc and signal anything of its run. Its request channel cannot be opened through
// /proc (a socket: ENXIO), while a known-false control shows the same attack forking an escapee from a
// launcher fed through a plain pipe; a launcher the agent kills or stops is replaced, and nothing is left.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import { cleanEnv } from "../helpers/cli.js";
import { carriers, identify, procRunning, survivors, type Proc } from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";
import { LAUNCHER_SCRIPT } from "../../src/process/launcher-script.js";
import { PRCTL_SYSCALL } from "../../src/process/pid1.js";
import { findOnPath } from "../../src/process/supervision.js";

const cleanup = cleanupAfterTests();
const ATTACK = fileURLToPath(new URL("../fixtures/launcher-attack.js", import.meta.url));
const perl = findOnPath("perl");
const prctl = PRCTL_SYSCALL[process.arch];
const skip =
  process.platform !== "linux"
    ? "Linux only"
    : perl === null
      ? "no perl"
      : prctl === undefined
        ? `no prctl number for ${process.arch}`
        : false;
const env = (): NodeJS.ProcessEnv => cleanEnv({ RALPH_SUPERVISION: "subreaper" });

type Attempt = { pid: number; fd: number; opened: boolean; code?: string };

/** Parent pid and name of a process, from /proc (null when gone). */
function parentOf(pid: number): { ppid: number; comm: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return {
      ppid: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]),
      comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
    };
  } catch {
    return null;
  }
}

/** The escapee's process once its pid file is complete, registered for cleanup. */
function escapee(pidFile: string): Proc {
  const proc = identify(Number(readFileSync(pidFile, "utf8")));
  cleanup.pid(proc);
  return proc;
}

// The agent of the kill and stop tests: it finds its run's launcher among its own ancestors through /proc by
// name and marker (a few reads, not a look at every process of the machine), notes "ITERATION PID START" of it,
// and does what the iteration's word in $2 says.
const LAUNCHER_AGENT = `
p=$PPID
while [ "$p" -gt 1 ]; do
  read -r _ c _ pp _ < /proc/$p/stat || break
  [ "$c" = "(perl)" ] && tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qxF "RALPH_SUPERVISOR=$RALPH_SUPERVISOR" && { l=$p; break; }
  p=$pp
done
echo "$RALPH_SUPERVISOR" > "$0.marker"
echo "$RALPH_ITERATION $l $(awk '{ print $22 }' /proc/$l/stat)" >> "$0"
set -- $(echo "$1" | cut -d, -f"$RALPH_ITERATION")
case "$1" in
  escape-kill-sleep)
    setsid -f sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 300' "$0.escapee" </dev/null >/dev/null 2>&1
    while [ ! -s "$0.escapee" ]; do sleep 0.01; done
    kill -KILL "$l"; exec sleep 30;;
  escape-kill-subreaper)
    setsid -f sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 300' "$0.escapee" </dev/null >/dev/null 2>&1
    while [ ! -s "$0.escapee" ]; do sleep 0.01; done
    kill -KILL $PPID;;
  kill) kill -KILL "$l";;
  stop) kill -STOP "$l";;
esac`;

/** Runs ralph for as many iterations as `plan` has words, the agent doing each; returns the launchers it noted. */
async function runAgainst(
  plan: string[],
): Promise<{ launchers: Proc[]; marker: string; files: string; code: number | null; stdout: string }> {
  const { dir, files } = cleanup.project();
  const notes = join(files, "launchers");
  const agent = ["sh", "-c", LAUNCHER_AGENT, notes, plan.join(",")];
  const ralph = cleanup.ralph(
    ["run", "--name", "x", "-n", String(plan.length), "--grace", "300ms", "--agent", "command", "go", "--", ...agent],
    dir,
    env(),
  );
  const result = await within(ralph.done, 20_000, "ralph's exit");
  const lines = readFileSync(notes, "utf8").trim().split("\n");
  const launchers = lines.map((line) => {
    const [, pid, start] = line.split(" ");
    const proc = { pid: Number(pid), start: start ?? "?" };
    cleanup.pid(proc);
    return proc;
  });
  assert.deepEqual(
    lines.map((line) => line.split(" ")[0]),
    plan.map((_, index) => String(index + 1)),
    result.stdout + result.stderr,
  );
  return {
    launchers,
    marker: readFileSync(`${notes}.marker`, "utf8").trim(),
    files: notes,
    code: result.code,
    stdout: result.stdout + result.stderr,
  };
}

describe("the subreaper launcher against a hostile agent", { concurrency: 2, skip }, () => {
  test("an agent cannot open the launcher's request or answer channel through /proc: no process is forked for it", async () => {
    const { dir, files } = cleanup.project();
    const result = join(files, "attempts.json");
    const escapeeFile = join(files, "escapee.pid");
    const ralph = cleanup.ralph(
      [
        "run",
        "--name",
        "x",
        "-n",
        "1",
        "--agent",
        "command",
        "go",
        "--",
        process.execPath,
        ATTACK,
        result,
        escapeeFile,
      ],
      dir,
      env(),
    );
    const exit = await within(ralph.done, 20_000, "ralph's exit");
    assert.equal(exit.code, 3, exit.stdout + exit.stderr);
    const attempts = JSON.parse(readFileSync(result, "utf8")) as Attempt[];
    assert.equal(
      new Set(attempts.map((attempt) => attempt.pid)).size,
      1,
      `the agent found its one launcher: ${JSON.stringify(attempts)}`,
    );
    assert.deepEqual(
      attempts.map(({ fd, opened, code }) => ({ fd, opened, code })),
      [
        { fd: 0, opened: false, code: "ENXIO" },
        { fd: 1, opened: false, code: "ENXIO" },
      ],
    );
    assert.equal(existsSync(escapeeFile), false, "no escapee was forked");
  });

  test("known-false control: the same attack on a launcher fed through a plain pipe forks an escapee outside the attacker's tree", async () => {
    const { dir, files } = cleanup.project();
    const entry = `RALPH_SUPERVISOR=control:${randomBytes(6).toString("hex")}`;
    const markerEnv = { ...cleanEnv(), RALPH_SUPERVISOR: entry.slice("RALPH_SUPERVISOR=".length) };
    // The launcher's stdin a pipe from `sleep` instead of Node's socket; its group is ended at cleanup.
    cleanup.process("sh", ["-c", 'sleep 20 | exec "$0" -e "$1" "$2"', perl as string, LAUNCHER_SCRIPT, String(prctl)], {
      cwd: dir,
      env: markerEnv,
      detached: true,
    });
    await waitFor(() => carriers("perl", entry).length === 1, "the control's launcher", 10_000);
    const [launcher] = carriers("perl", entry) as [number];
    const result = join(files, "attempts.json");
    const escapeeFile = join(files, "escapee.pid");
    const attack = spawnSync(process.execPath, [ATTACK, result, escapeeFile], {
      env: markerEnv,
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(attack.status, 0, attack.stderr);
    const attempts = JSON.parse(readFileSync(result, "utf8")) as Attempt[];
    assert.deepEqual(attempts[0], { pid: launcher, fd: 0, opened: true });
    assert.ok(existsSync(escapeeFile), "the launcher forked the attacker's request");
    const proc = escapee(escapeeFile);
    assert.ok(procRunning(proc), "the escapee runs after its attacker has left");
    const subreaper = parentOf(proc.pid)?.ppid ?? 0;
    assert.deepEqual(
      parentOf(subreaper),
      { ppid: launcher, comm: "ralph-subreaper" },
      "its subreaper is the launcher's child, not the attacker's",
    );
  });

  test("an agent that SIGKILLs the launcher (then sleeps, or exits 0) fails or ends its iteration; the next has a new launcher; nothing is left", async () => {
    const { launchers, marker, files, code, stdout } = await runAgainst(["escape-kill-sleep", "kill", "record"]);
    assert.equal(code, 3, stdout);
    assert.match(stdout, /\[1\/3\] .*failed \(exit SIGKILL/);
    const [first, second, third] = launchers as [Proc, Proc, Proc];
    assert.notEqual(second.pid, first.pid, "iteration 2 had a new launcher");
    assert.notEqual(third.pid, second.pid, "iteration 3 had a new launcher");
    // The runner SIGKILLs its last launcher as it leaves, without waiting for it to have run its exit.
    await waitFor(
      () => !procRunning(first) && !procRunning(second) && !procRunning(third),
      "every launcher to be gone",
      5000,
    );
    assert.equal(procRunning(escapee(`${files}.escapee`)), false, "the escapee of iteration 1 was ended");
    assert.deepEqual(survivors({ key: "RALPH_SUPERVISOR", value: marker }), []);
  });

  test("an agent that SIGKILLs its own subreaper after starting a detached escapee: the escapee is ended with the iteration", async () => {
    // A subreaper killed leaves its orphans to init and its tree unsealed: the ending must not take it for
    // one that left by itself with nothing under it (which skips the search for the run's marker).
    const { marker, files, code, stdout } = await runAgainst(["escape-kill-subreaper"]);
    assert.equal(code, 3, stdout);
    assert.match(stdout, /\[1\/1\] .*failed \(exit SIGKILL/);
    assert.equal(procRunning(escapee(`${files}.escapee`)), false, "the escapee was ended");
    assert.deepEqual(survivors({ key: "RALPH_SUPERVISOR", value: marker }), []);
  });

  test("an agent that SIGSTOPs the launcher: the next iteration starts at once with a new one, the stopped one is ended", async () => {
    const { launchers, marker, code, stdout } = await runAgainst(["stop", "record", "record"]);
    assert.equal(code, 3, stdout);
    const [stopped, second, third] = launchers as [Proc, Proc, Proc];
    assert.notEqual(second.pid, stopped.pid, "iteration 2 had a new launcher");
    assert.equal(third.pid, second.pid, "which served iteration 3 too");
    await waitFor(
      () => !procRunning(stopped) && !procRunning(second),
      "the stopped launcher and the run's last one to be gone",
      5000,
    );
    assert.deepEqual(survivors({ key: "RALPH_SUPERVISOR", value: marker }), []);
  });
});
