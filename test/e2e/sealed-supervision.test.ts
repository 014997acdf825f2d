// Sealed supervision (SPEC section 9) through the built CLI, in both modes: a daemon that clears its
// environment, starts a new session and closes its stdio is ended with the agent's tree; a known-false
// control shows that a process-group kill leaves it running; caps on the agent tree hold.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { cleanEnv, RALPH, readEvents, readStatus } from "../helpers/cli.js";
import { identify, procRunning, progressBlocks, survivors, type Proc } from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();

// The escapee: env -i, setsid, stdio closed, then `sleep 300`. It writes its pid first, and the agent waits
// for that file, so the test knows it ran before the agent ended.
const ESCAPEE = `echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec </dev/null >/dev/null 2>&1; sleep 0.2; exec sleep 300`;

// The agent first notes "PID NAME" of itself, of its parent (under a subreaper, the subreaper) and of that
// one's parent (the launcher), one per line, in PIDFILE.tree.
const NOTE_TREE = `p=$(awk '{ print $4 }' /proc/$PPID/stat); for q in $$ $PPID $p; do echo "$q $(cat /proc/$q/comm)"; done > "$1.tree.tmp"; mv "$1.tree.tmp" "$1.tree"`;

/** A bash agent that notes its tree, starts the escapee, waits until it has written its pid, then runs `then`. */
function escapeeAgent(pidFile: string, then: string): string[] {
  const script = `${NOTE_TREE}; env -i setsid -f bash -c '${ESCAPEE}' escapee "$1"; while [ ! -s "$1" ]; do sleep 0.01; done; ${then}`;
  return ["bash", "-c", script, "agent", pidFile];
}

/** The first `count` of the agent, its subreaper and the launcher that forked it, as the agent noted them (NOTE_TREE). */
function agentTree(pidFile: string, count: number): Array<{ proc: Proc; name: string }> {
  return readFileSync(`${pidFile}.tree`, "utf8")
    .trim()
    .split("\n")
    .slice(0, count)
    .map((line) => {
      const [pid, name] = line.split(" ");
      const proc = identify(Number(pid));
      cleanup.pid(proc);
      return { proc, name: name ?? "" };
    });
}

/** Under a subreaper: that the agent's subreaper was forked by the run's launcher (a Perl), not by the runner. */
function assertLaunched(tree: Array<{ proc: Proc; name: string }>, runner: number): void {
  const [, subreaper, launcher] = tree;
  assert.equal(subreaper?.name, "ralph-subreaper");
  assert.equal(launcher?.name, "perl", "the subreaper's parent is the launcher");
  assert.notEqual(launcher?.proc.pid, runner, "not the runner");
}

/** Why a mode cannot be had here (from `ralph doctor --json` with the mode forced), or null. */
function unavailable(mode: string): string | null {
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv({ RALPH_SUPERVISION: mode }),
    encoding: "utf8",
    timeout: 60_000,
  });
  if (result.status === 0) return null;
  try {
    return `${mode} supervision unavailable here: ${(JSON.parse(result.stdout) as { supervision: { why: string } }).supervision.why}`;
  } catch {
    return `${mode} supervision unavailable here: ${result.stderr || result.stdout}`;
  }
}

/** Whether a controller of the cgroup mode works here, from `ralph doctor --json`. */
function controllerMissing(name: string): string | null {
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
    encoding: "utf8",
    timeout: 60_000,
  });
  const source =
    (JSON.parse(result.stdout) as { supervision: { controllers: Record<string, string> } }).supervision.controllers[
      name
    ] ?? "unavailable";
  return source.startsWith("unavailable") ? `the ${name} controller is ${source}` : null;
}

/** Reads the escapee's pid once written and registers it for cleanup. */
async function escapee(pidFile: string, owner: { running(): boolean; output(): string }): Promise<Proc> {
  await waitFor(
    () => {
      if (!owner.running() && !existsSync(pidFile))
        throw new Error(`ralph exited before the escapee started:\n${owner.output()}`);
      return existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n");
    },
    pidFile,
    20_000,
  );
  const proc = identify(Number(readFileSync(pidFile, "utf8")));
  cleanup.pid(proc);
  return proc;
}

for (const mode of ["cgroup", "subreaper"] as const) {
  const skip = process.platform !== "linux" ? "Linux only" : unavailable(mode);
  describe(`${mode} supervision`, { concurrency: 2, skip: skip ?? false }, () => {
    const env = (): NodeJS.ProcessEnv => cleanEnv({ RALPH_SUPERVISION: mode });

    test("a detached escapee started by an agent that exits 0 is ended with its tree", async () => {
      const { dir, files, runDir } = cleanup.project();
      const pidFile = join(files, "escapee.pid");
      const ralph = cleanup.ralph(
        [
          "run",
          "--name",
          "x",
          "-n",
          "1",
          "--grace",
          "1s",
          "--agent",
          "command",
          "go",
          "--",
          ...escapeeAgent(pidFile, "exit 0"),
        ],
        dir,
        env(),
      );
      const proc = await escapee(pidFile, ralph);
      if (mode === "subreaper") assertLaunched(agentTree(pidFile, 3), ralph.child.pid as number);
      const result = await within(ralph.done, 30_000, "ralph's exit");
      assert.equal(result.code, 3, result.stderr);
      assert.equal(procRunning(proc), false, `the escapee ${proc.pid} survived the run`);
      // The escapee, and its `sleep 0.2` when caught before its exec.
      assert.ok(Number(progressBlocks(runDir)[0]?.leftover_processes) >= 1, "the teardown found the escapee");
      assert.equal(readStatus(runDir).supervision, mode);
      const started = readEvents(runDir).find((event) => event.type === "run_started");
      assert.equal(started?.supervision, mode);
      const ended = readEvents(runDir).find((event) => event.type === "iteration_ended");
      if (mode === "cgroup") {
        const resources = ended?.resources as { cpu_seconds: unknown; peak_pids: unknown };
        assert.equal(typeof resources.cpu_seconds, "number");
        assert.ok(typeof resources.peak_pids === "number" && resources.peak_pids >= 2, JSON.stringify(resources));
        assert.match(result.stdout, /\[1\/1\] .* · cpu \d+\.\ds/);
      } else {
        assert.equal(ended?.resources, null);
      }
    });

    test("a detached escapee is ended when ralph gets SIGTERM mid-iteration", async () => {
      const { dir, files, runDir } = cleanup.project();
      const pidFile = join(files, "escapee.pid");
      const ralph = cleanup.ralph(
        [
          "run",
          "--name",
          "x",
          "-n",
          "1",
          "--grace",
          "1s",
          "--agent",
          "command",
          "go",
          "--",
          ...escapeeAgent(pidFile, "exec sleep 60"),
        ],
        dir,
        env(),
      );
      const proc = await escapee(pidFile, ralph);
      process.kill(ralph.child.pid as number, "SIGTERM");
      const result = await within(ralph.done, 30_000, "ralph's exit");
      assert.equal(result.signal ?? result.code, result.signal ? "SIGTERM" : 143, result.stderr);
      assert.equal(readStatus(runDir).exit_reason, "INTERRUPTED");
      assert.equal(procRunning(proc), false, `the escapee ${proc.pid} survived SIGTERM`);
    });

    test("a detached escapee is ended by the guardian when ralph is SIGKILLed mid-iteration", async () => {
      const { dir, files } = cleanup.project();
      const pidFile = join(files, "escapee.pid");
      const ralph = cleanup.ralph(
        [
          "run",
          "--name",
          "x",
          "-n",
          "1",
          "--grace",
          "300ms",
          "--agent",
          "command",
          "go",
          "--",
          ...escapeeAgent(pidFile, "exec sleep 60"),
        ],
        dir,
        env(),
      );
      const proc = await escapee(pidFile, ralph);
      // The agent, and under a subreaper its subreaper and the launcher: the guardian ends them all.
      const tree = agentTree(pidFile, mode === "subreaper" ? 3 : 1);
      if (mode === "subreaper") assertLaunched(tree, ralph.child.pid as number);
      process.kill(ralph.child.pid as number, "SIGKILL");
      await within(ralph.done, 10_000, "ralph's exit");
      await waitFor(() => !procRunning(proc), `the guardian ending escapee ${proc.pid}`, 15_000);
      for (const { proc: member, name } of tree)
        await waitFor(() => !procRunning(member), `the guardian ending ${name} ${member.pid}`, 15_000);
    });

    if (mode === "subreaper") {
      test("every iteration's subreaper is forked by one Perl launcher, not started by ralph itself", async () => {
        const { dir, files } = cleanup.project();
        const parents = join(files, "parents");
        // Each agent notes its subreaper's parent (field 4 of /proc/PID/stat; the names have no spaces).
        const agent = [
          "sh",
          "-c",
          `awk '{ print $4 }' /proc/$PPID/stat >> "$0"; awk '{ print $2 }' /proc/$PPID/stat >> "$0.names"`,
          parents,
        ];
        const ralph = cleanup.ralph(
          ["run", "--name", "x", "-n", "3", "--agent", "command", "go", "--", ...agent],
          dir,
          env(),
        );
        const result = await within(ralph.done, 30_000, "ralph's exit");
        assert.equal(result.code, 3, result.stderr);
        assert.deepEqual(readFileSync(`${parents}.names`, "utf8").trim().split("\n"), [
          "(ralph-subreaper)",
          "(ralph-subreaper)",
          "(ralph-subreaper)",
        ]);
        const [first, ...rest] = readFileSync(parents, "utf8").trim().split("\n").map(Number);
        assert.deepEqual(rest, [first, first], "the same launcher forked the three subreapers");
        assert.notEqual(first, ralph.child.pid, "the subreapers' parent is the launcher, not the runner");
      });
    }
  });
}

describe("known-false control", () => {
  test(
    "the escapee survives a plain process-group kill of the agent",
    { skip: process.platform !== "linux" ? "Linux only" : false },
    async () => {
      const { dir, files } = cleanup.project();
      const pidFile = join(files, "escapee.pid");
      const [program, ...args] = escapeeAgent(pidFile, "exec sleep 60");
      const agent = spawn(program as string, args, { cwd: dir, env: cleanEnv(), stdio: "ignore", detached: true });
      const exited = new Promise((resolve) => agent.once("exit", resolve));
      const proc = await escapee(pidFile, {
        running: () => agent.exitCode === null && agent.signalCode === null,
        output: () => "",
      });
      process.kill(-(agent.pid as number), "SIGKILL");
      await within(exited, 10_000, "the agent's exit");
      // Still there after the agent's group is gone, and it goes on to run `sleep 300`.
      await waitFor(
        () => readFileSync(`/proc/${proc.pid}/cmdline`, "utf8") === "sleep\u0000300\u0000",
        "the escapee's sleep 300",
        10_000,
      );
      assert.equal(procRunning(proc), true);
      process.kill(proc.pid, "SIGKILL");
    },
  );
});

describe("caps", { concurrency: 2 }, () => {
  const cgroupMissing = process.platform !== "linux" ? "Linux only" : unavailable("cgroup");
  // A bounded fork bomb: every shell forks two more down to depth 5 (63 shells), each then waits.
  const bomb = ["bash", "-c", "b() { if [ $1 -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & fi; wait; sleep 30; }; b 5"];

  for (const capped of [true, false]) {
    test(
      capped
        ? "a fork bomb under --pids-max 20 stays within 20 processes and is ended"
        : "known-false control: without --pids-max the same bomb exceeds 20",
      { skip: cgroupMissing ?? controllerMissing("pids") ?? false },
      async () => {
        const { dir, runDir } = cleanup.project();
        const tag = cleanup.tag();
        const cap = capped ? ["--pids-max", "20"] : [];
        const ralph = cleanup.ralph(
          [
            "run",
            "--name",
            "x",
            "-n",
            "1",
            "--timeout",
            "3s",
            "--grace",
            "200ms",
            ...cap,
            "--agent",
            "command",
            "go",
            "--",
            "env",
            `${tag.key}=${tag.value}`,
            ...bomb,
          ],
          dir,
          cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
        );
        const result = await within(ralph.done, 60_000, "ralph's exit");
        assert.equal(result.code, 3, result.stderr);
        const ended = readEvents(runDir).find((event) => event.type === "iteration_ended");
        const peak = (ended?.resources as { peak_pids: number }).peak_pids;
        if (capped) assert.ok(peak <= 20 && peak >= 10, `peak ${peak} processes`);
        else assert.ok(peak > 20, `peak ${peak} processes`);
        assert.equal(ended?.result, "timeout");
        assert.deepEqual(survivors(tag), []);
      },
    );
  }

  test(
    "an iteration that hits --memory-max is ended and counted failed, naming memory",
    { skip: cgroupMissing ?? controllerMissing("memory") ?? false },
    async () => {
      const { dir, runDir } = cleanup.project();
      const hog = ["bash", "-c", `perl -e '$x = "a" x (200 * 1024 * 1024); sleep 30'; sleep 30`];
      const ralph = cleanup.ralph(
        [
          "run",
          "--name",
          "x",
          "-n",
          "1",
          "--memory-max",
          "32M",
          "--grace",
          "200ms",
          "--agent",
          "command",
          "go",
          "--",
          ...hog,
        ],
        dir,
        cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
      );
      const result = await within(ralph.done, 30_000, "ralph's exit");
      assert.equal(result.code, 3, `signal ${result.signal}: ${result.stdout}${result.stderr}`);
      const ended = readEvents(runDir).find((event) => event.type === "iteration_ended");
      assert.equal(ended?.result, "failed");
      assert.equal(ended?.ended_by, "memory_cap");
      assert.match(String(ended?.error), /memory/);
      assert.ok((ended?.resources as { oom_kills: number }).oom_kills >= 1);
      assert.ok((ended?.resources as { peak_memory_bytes: number }).peak_memory_bytes <= 32 * 2 ** 20);
    },
  );

  test(
    "a cap without a writable cgroup is a usage error that says so, and nothing is written",
    { skip: process.platform !== "linux" ? "Linux only" : false },
    async () => {
      const { dir } = cleanup.project();
      const ralph = cleanup.ralph(
        ["run", "--name", "x", "-n", "1", "--pids-max", "20", "--agent", "command", "go", "--", "true"],
        dir,
        cleanEnv({ RALPH_SUPERVISION: "subreaper" }),
      );
      const result = await within(ralph.done, 30_000, "ralph's exit");
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--pids-max needs a writable cgroup v2 hierarchy/);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.equal(existsSync(join(dir, ".ralph", "runs", "x")), false);
    },
  );
});

describe("ralph doctor", () => {
  test("names the mode and why, each agent CLI with its version or why not, and Node's version", async () => {
    const { dir, files } = cleanup.project();
    const fakeClaude = join(files, "claude");
    writeFileSync(fakeClaude, "#!/bin/sh\necho '9.8.7 (Claude Code)'\n", { mode: 0o755 });
    const env = cleanEnv({ RALPH_SUPERVISION: "tree", RALPH_CLAUDE_BIN: fakeClaude, PATH: "/usr/bin:/bin" });
    const result = spawnSync(process.execPath, [RALPH, "doctor"], { cwd: dir, env, encoding: "utf8", timeout: 60_000 });
    assert.equal(result.status, 0, result.stderr);
    assert.match(
      result.stdout,
      /^supervision {2}tree: RALPH_SUPERVISION=tree; process parentage, marker and samples$/m,
    );
    assert.match(result.stdout, new RegExp(`^claude +${fakeClaude} 9\\.8\\.7 \\(Claude Code\\)$`, "m"));
    assert.match(result.stdout, /^codex +not found \(codex on PATH, or RALPH_CODEX_BIN\)$/m);
    assert.match(result.stdout, new RegExp(`^node +${process.version.replace(/\./g, "\\.")} `, "m"));
  });

  test(
    "--json reports the mode in force; a forced mode that cannot be had exits 1 saying why",
    { skip: process.platform !== "linux" ? "Linux only" : false },
    () => {
      const ok = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
        env: cleanEnv({ RALPH_SUPERVISION: "subreaper" }),
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(ok.status, 0, ok.stderr);
      assert.equal((JSON.parse(ok.stdout) as { supervision: { mode: string } }).supervision.mode, "subreaper");
      const bad = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
        env: cleanEnv({ RALPH_SUPERVISION: "kernel" }),
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(bad.status, 1);
      assert.match(
        (JSON.parse(bad.stdout) as { supervision: { why: string } }).supervision.why,
        /RALPH_SUPERVISION=kernel: expected one of auto, cgroup, subreaper, tree/,
      );
    },
  );
});

describe("stale cgroups", () => {
  const skip = process.platform !== "linux" ? "Linux only" : unavailable("cgroup");
  test(
    "a dead runner's cgroup is killed and removed by the next ralph; a live runner's is left alone",
    { skip: skip ?? false },
    async () => {
      const { dir } = cleanup.project();
      const doctor = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
        env: cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
        encoding: "utf8",
        timeout: 60_000,
      });
      const made = (JSON.parse(doctor.stdout) as { supervision: { tried: string[] } }).supervision.tried.find((entry) =>
        entry.endsWith(": ok"),
      ) as string;
      const base = dirname(made);
      const namespace = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] as string;
      // A runner that is gone: a pid that exited, with a start time it never had.
      const gone = spawnSync("true").pid as number;
      const stale = join(base, `ralph-${namespace}-${gone}-1`);
      // A runner that is alive: this test process, with its real start time.
      const live = join(base, `ralph-${namespace}-${process.pid}-${identify(process.pid).start}`);
      const sleepers: Proc[] = [];
      for (const cgroup of [stale, live]) {
        const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
        const proc = identify(sleeper.pid as number);
        cleanup.pid(proc);
        sleepers.push(proc);
        // Another ralph on this machine (a second test suite) may remove the dead runner's cgroup between its
        // making and the write: the behaviour under test, done early. It is made again until the write lands.
        for (let attempt = 1; ; attempt++) {
          mkdirSync(cgroup, { recursive: true });
          try {
            writeFileSync(join(cgroup, "cgroup.procs"), String(sleeper.pid));
            break;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOENT" || cgroup !== stale || attempt === 10) throw error;
          }
        }
      }
      try {
        const ralph = cleanup.ralph(
          ["run", "--name", "x", "-n", "1", "--agent", "command", "go", "--", "true"],
          dir,
          cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
        );
        const result = await within(ralph.done, 30_000, "ralph's exit");
        assert.equal(result.code, 3, result.stderr);
        assert.equal(existsSync(stale), false, "the dead runner's cgroup is still there");
        await waitFor(() => !procRunning(sleepers[0] as Proc), "the dead runner's leftover to die", 5000);
        assert.equal(existsSync(live), true, "a live runner's cgroup was removed");
        assert.equal(procRunning(sleepers[1] as Proc), true, "a live runner's process was killed");
      } finally {
        for (const proc of sleepers) if (procRunning(proc)) process.kill(proc.pid, "SIGKILL");
        for (const cgroup of [stale, live]) {
          await waitFor(
            () =>
              !existsSync(join(cgroup, "cgroup.procs")) || readFileSync(join(cgroup, "cgroup.procs"), "utf8") === "",
            `${cgroup} to empty`,
            5000,
          );
          if (existsSync(cgroup)) rmdirSync(cgroup);
        }
      }
    },
  );
});
