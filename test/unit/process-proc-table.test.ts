// The process table reader, the protected set and the pid-reuse guard.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import {
  hasEnvMarker,
  isAlive,
  parseStat,
  readProcTable,
  readProcess,
  type ProcInfo,
} from "../../src/process/proc-table.js";
import { isProtected, protectedSet } from "../../src/process/protected-set.js";
import { TreeScanner } from "../../src/process/tree-scanner.js";
import { isRunning, procState } from "../fixtures/tree-harness.js";
import { waitFor } from "../helpers/wait.js";
import { freeze, freezerMissing } from "../fixtures/freezer.js";

/** A process's environment as /proc shows it (empty when it cannot be read). */
function environOf(pid: number): Buffer {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return Buffer.alloc(0);
  }
}

function startSleeper(env: NodeJS.ProcessEnv = process.env, script = "exec sleep 1000") {
  const child = spawn("sh", ["-c", script], { env, stdio: "ignore", detached: true });
  return { child, pid: child.pid as number };
}

describe("proc-table", () => {
  it("parses /proc/PID/stat after the last ')' even when comm holds ') '", () => {
    const info = parseStat("4242 (we) ird) S (x) R 17 4242 4200 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0");
    assert.deepEqual(info, {
      pid: 4242,
      ppid: 17,
      pgid: 4242,
      sid: 4200,
      state: "R",
      startTime: "987654",
      comm: "we) ird) S (x",
    });
    assert.equal(parseStat("garbage"), null);
  });

  it("marks a process dying when its flags say PF_EXITING or SIGKILL is pending, and only then", () => {
    // Fields 3–31 of proc(5): flags is field 9, the pending signals field 31.
    const line = (flags: number, pending: number) =>
      `7 (a) S 1 7 7 0 -1 ${flags} 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0 0 0 0 0 0 0 ${pending} 0 0 0`;
    assert.equal(parseStat(line(0x400100, 0))?.dying, undefined);
    assert.equal(parseStat(line(0x400100, 0x4000))?.dying, undefined, "another signal pending (SIGTERM's bit 15)");
    assert.equal(parseStat(line(0x400104, 0))?.dying, true);
    assert.equal(parseStat(line(0x400100, 0x100))?.dying, true);
  });

  it(
    "a process SIGKILLed while frozen still reads state D, and is marked dying",
    { skip: freezerMissing() ?? false },
    async (t) => {
      const { child, pid } = startSleeper();
      const frozen = await freeze(pid);
      t.after(async () => {
        child.kill("SIGKILL");
        await frozen.thaw();
      });
      assert.equal(readProcess(pid)?.dying, undefined, "frozen alone is not dying");
      process.kill(pid, "SIGKILL");
      // Control: its state alone reads as a live process's.
      assert.equal(readProcess(pid)?.state, "D");
      assert.equal(readProcess(pid)?.dying, true);
    },
  );

  it("reads this process and its parent, consistently with the whole table", () => {
    const self = readProcess(process.pid);
    assert.ok(self !== null && isAlive(self));
    assert.equal(self.ppid, process.ppid);
    const table = readProcTable();
    assert.deepEqual(table.get(process.pid)?.startTime, self.startTime);
    assert.ok(table.has(process.ppid) && table.has(1));
    assert.equal(readProcess(2 ** 30), null);
  });

  it("reports zombies with state Z, and isAlive treats them as dead", async (t) => {
    // sleep is exec'd over the shell and never reaps the shell's background child.
    const { child, pid } = startSleeper(process.env, "sleep 0.01 & exec sleep 1000");
    t.after(() => child.kill("SIGKILL"));
    let zombie: ProcInfo | undefined;
    await waitFor(
      () => {
        zombie = [...readProcTable().values()].find((info) => info.ppid === pid && info.state === "Z");
        return zombie !== undefined;
      },
      "a zombie child of the sleeper",
      5000,
    );
    assert.ok(zombie !== undefined);
    assert.equal(readProcess(zombie.pid)?.state, "Z");
    assert.equal(isAlive(readProcess(zombie.pid)), false);
    assert.equal(isAlive(null), false);
  });

  it("gives a zombie's exit status as waitpid would: an exit code, or the signal that killed it", async (t) => {
    // Perl, unlike a shell, never reaps a child it did not wait for: one exits 3, one is killed, then sleep.
    const child = spawn(
      "perl",
      ["-e", 'if (!fork) { exit 3 } my $p = fork; if (!$p) { sleep 100; exit 0 } kill 9, $p; exec "sleep", 1000'],
      { stdio: "ignore", detached: true },
    );
    const pid = child.pid as number;
    t.after(() => child.kill("SIGKILL"));
    let zombies: ProcInfo[] = [];
    await waitFor(
      () => {
        zombies = [...readProcTable().values()].filter((info) => info.ppid === pid && info.state === "Z");
        return zombies.length === 2;
      },
      "two zombie children of the perl process",
      5000,
    );
    assert.deepEqual(
      zombies.map((zombie) => zombie.exitStatus).sort((a, b) => (a ?? 0) - (b ?? 0)),
      [9, 3 << 8],
    );
    assert.equal(readProcess(process.pid)?.exitStatus, undefined, "a live process has none");
  });

  it("finds an exact KEY=VALUE entry in a process's environment, not a prefix", async (t) => {
    const { child, pid } = startSleeper({ ...process.env, RALPH_T_MARK: "abc123", RALPH_T_OTHER: "x" });
    t.after(() => child.kill("SIGKILL"));
    await waitFor(() => procState(pid) !== null, `process ${pid} in /proc`, 5000);
    // exec names the process before it lays out the new environment: until then /proc/PID/environ reads empty.
    await waitFor(
      () => readProcess(pid)?.comm === "sleep" && environOf(pid).length > 0,
      `process ${pid} to be sleep, its environment laid out`,
      5000,
    );
    assert.equal(hasEnvMarker(pid, "RALPH_T_MARK", "abc123"), true);
    assert.equal(hasEnvMarker(pid, "RALPH_T_MARK", "abc12"), false);
    assert.equal(hasEnvMarker(pid, "T_MARK", "abc123"), false);
    assert.equal(hasEnvMarker(pid, "RALPH_T_OTHER", "x"), true);
    assert.equal(hasEnvMarker(2 ** 30, "RALPH_T_MARK", "abc123"), false);
  });
});

describe("protected set", () => {
  const info = (pid: number, ppid: number, pgid: number, sid: number): ProcInfo => ({
    pid,
    ppid,
    pgid,
    sid,
    state: "S",
    startTime: String(pid),
    comm: "x",
  });
  // 1 ← 10 (session 10) ← 20 (group 20) ← 30 = self; 40 shares 20's group, 50 shares 10's session, 60 is elsewhere.
  const table = new Map<number, ProcInfo>(
    [
      info(1, 0, 1, 1),
      info(10, 1, 10, 10),
      info(20, 10, 20, 10),
      info(30, 20, 20, 10),
      info(40, 1, 20, 10),
      info(50, 1, 50, 10),
      info(60, 1, 60, 60),
      info(70, 2, 0, 0),
    ].map((p) => [p.pid, p]),
  );
  const set = protectedSet(table, 30);
  it("covers the runner, its ancestors, PID 1, kernel threads, and their groups and sessions", () => {
    for (const pid of [30, 20, 10, 1, 40, 50, 70])
      assert.equal(isProtected(set, table.get(pid) as ProcInfo), true, `pid ${pid}`);
  });
  it("leaves other sessions alone", () => {
    assert.equal(isProtected(set, table.get(60) as ProcInfo), false);
  });
});

describe("pid-reuse guard", () => {
  it("does not signal a pid whose start time differs from the remembered identity", async (t) => {
    const { child, pid } = startSleeper();
    t.after(() => child.kill("SIGKILL"));
    await waitFor(() => procState(pid) !== null, `process ${pid} in /proc`, 5000);
    const scanner = new TreeScanner(pid, null, []);
    const live = scanner.scan();
    assert.equal(live.size, 1);
    const real = [...live.values()][0] as { pid: number; startTime: string };
    assert.equal(scanner.send({ pid, startTime: `${real.startTime}0` }, "SIGKILL"), false);
    assert.equal(isRunning(pid), true, "the reused pid was not signalled");
    const exited = new Promise((resolve) => child.once("exit", resolve));
    assert.equal(scanner.send(real, "SIGKILL"), true);
    await exited;
  });
});
