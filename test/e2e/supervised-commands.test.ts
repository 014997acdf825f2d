// Check and notify commands run supervised like an agent: a daemon they double-fork (env -i setsid) is ended
// with them. And a notification command is a shell line: pipes, redirections, one JSON line per event,
// its stderr shown when it fails.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, onlyRunDir, processAlive, readEvents, runRalph, tempProjects } from "../helpers/cli.js";
import { waitForFile } from "../helpers/wait.js";

const project = tempProjects("ralph-supervised-");
const daemons: number[] = [];
after(() => {
  for (const pid of daemons) if (processAlive(pid)) process.kill(pid, "SIGKILL");
});

/** A script that double-forks an `env -i setsid` daemon (its pid in `pidFile`), waits until it runs, then exits 0. */
function daemonScript(pidFile: string): string {
  return `#!/bin/sh\n( env -i /usr/bin/setsid /bin/sh -c 'echo $$ > "${pidFile}.tmp"; mv "${pidFile}.tmp" "${pidFile}"; exec sleep 60' & ) </dev/null >/dev/null 2>&1\nwhile [ ! -s "${pidFile}" ]; do sleep 0.01; done\ncat >/dev/null\nexit 0\n`;
}

function daemonPid(pidFile: string): number {
  const pid = Number(readFileSync(pidFile, "utf8"));
  daemons.push(pid);
  return pid;
}

/** The way checks were run before: sh -c in its own process group, the group killed once it exits. */
function oldSpawnPath(command: string, cwd: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], { cwd, detached: true, stdio: "ignore" });
    child.on("exit", () => {
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // the group is gone
      }
      resolve();
    });
  });
}

for (const mode of ["cgroup", "subreaper"] as const) {
  describe(`supervised commands (${mode} mode)`, () => {
    test("--check ./test.sh that the agent rewrote to start a daemon: the daemon is ended with the check", async () => {
      const dir = project();
      const pidFile = join(dir, "check-daemon.pid");
      writeFileSync(join(dir, "planted.sh"), daemonScript(pidFile));
      writeFileSync(join(dir, "test.sh"), "#!/bin/sh\nexit 1\n");
      chmodSync(join(dir, "test.sh"), 0o755);
      // The agent replaces the person's test script with one that leaves a daemon behind and passes.
      const agent = ["--", "sh", "-c", "cp planted.sh test.sh; chmod +x test.sh"];
      const result = await runRalph(
        ["run", "--name", "c", "-n", "2", "--check", "./test.sh", "work", ...agent],
        dir,
        cleanEnv({ RALPH_SUPERVISION: mode }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(readEvents(onlyRunDir(dir)).at(-1)?.reason, "DONE");
      assert.equal(processAlive(daemonPid(pidFile)), false, "the check's daemon outlived ralph");
      // Control: under the old spawn path (its own process group, killed on exit) the same script's daemon survives.
      const controlPid = join(dir, "control.pid");
      writeFileSync(join(dir, "control.sh"), daemonScript(controlPid));
      chmodSync(join(dir, "control.sh"), 0o755);
      await oldSpawnPath("./control.sh", dir);
      await waitForFile(controlPid, 5000);
      assert.equal(processAlive(daemonPid(controlPid)), true, "control: the daemon survives a process-group kill");
    });

    test("a --notify script that starts a daemon: the daemon is ended with it, before ralph exits", async () => {
      const dir = project();
      const pidFile = join(dir, "notify-daemon.pid");
      writeFileSync(join(dir, "notify.sh"), daemonScript(pidFile));
      chmodSync(join(dir, "notify.sh"), 0o755);
      const result = await runRalph(
        ["run", "--name", "n", "-n", "1", "--notify", "./notify.sh", "work", "--", "true"],
        dir,
        cleanEnv({ RALPH_SUPERVISION: mode }),
      );
      assert.equal(result.code, 3, result.stderr);
      assert.equal(readEvents(onlyRunDir(dir)).filter((event) => event.type === "notification_failed").length, 0);
      assert.equal(processAlive(daemonPid(pidFile)), false, "the notify command's daemon outlived ralph");
      // Control: the same script under the old spawn path leaves it running.
      const controlPid = join(dir, "control.pid");
      writeFileSync(join(dir, "control.sh"), daemonScript(controlPid));
      chmodSync(join(dir, "control.sh"), 0o755);
      await oldSpawnPath("./control.sh", dir);
      await waitForFile(controlPid, 5000);
      assert.equal(processAlive(daemonPid(controlPid)), true, "control: the daemon survives a process-group kill");
    });
  });
}

describe("cgroup mode", () => {
  test("a check and a notification command each run in a cgroup of their own, not the agent's or the runner's", async () => {
    const dir = project();
    const unified = (file: string) =>
      readFileSync(join(dir, file), "utf8")
        .split("\n")
        .find((line) => line.startsWith("0::")) ?? "";
    const result = await runRalph(
      [
        "run",
        "--name",
        "g",
        "-n",
        "1",
        "--check",
        "cat /proc/self/cgroup > check.cg",
        "--notify",
        "cat /proc/self/cgroup > notify.cg",
        "work",
        "--",
        "sh",
        "-c",
        "cat /proc/self/cgroup > agent.cg",
      ],
      dir,
      cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
    );
    assert.equal(result.code, 0, result.stderr);
    const [agent, check, notify] = ["agent.cg", "check.cg", "notify.cg"].map(unified);
    for (const line of [agent, check, notify])
      assert.match(line ?? "", /\/ralph-[^/]+\/ralph-[^/]+$/, "in a cgroup under the runner's");
    assert.equal(new Set([agent, check, notify]).size, 3, `${agent} ${check} ${notify}`);
  });
});

describe("a notification command is a shell command line", () => {
  test("`cat >> events.jsonl` for two events appends two valid JSON lines", async () => {
    const dir = project();
    writeFileSync(
      join(dir, "ralph.yaml"),
      `notify:\n  - command: "cat >> notified.jsonl"\n    events: [run_started, run_ended]\n`,
    );
    const result = await runRalph(["run", "--name", "j", "-n", "1", "work", "--", "true"], dir);
    assert.equal(result.code, 3, result.stderr);
    const lines = readFileSync(join(dir, "notified.jsonl"), "utf8").split("\n");
    assert.equal(lines.pop(), "", "the file ends with a newline");
    assert.deepEqual(lines.map((line) => (JSON.parse(line) as { type: string }).type).sort(), [
      "run_ended",
      "run_started",
    ]);
  });

  test("a pipe: `jq -r .type >> types.txt`", async () => {
    const dir = project();
    const result = await runRalph(
      [
        "run",
        "--name",
        "q",
        "-n",
        "1",
        "--notify",
        "jq -r '.type + \" \" + .reason' >> types.txt",
        "work",
        "--",
        "true",
      ],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.equal(readFileSync(join(dir, "types.txt"), "utf8"), "run_ended MAX_ITERATIONS\n");
  });

  test("a failing command's first stderr lines are in notification_failed and run.log", async () => {
    const dir = project();
    const result = await runRalph(
      [
        "run",
        "--name",
        "f",
        "-n",
        "1",
        "--notify",
        "echo 'pager: no route to host' >&2; echo second >&2; exit 4",
        "work",
        "--",
        "true",
      ],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    const failed = readEvents(onlyRunDir(dir)).find((event) => event.type === "notification_failed");
    assert.equal(failed?.error, "exited with code 4: pager: no route to host | second");
    assert.match(
      readFileSync(join(onlyRunDir(dir), "run.log"), "utf8"),
      /notification failed: .*exited with code 4: pager: no route to host/,
    );
    assert.equal(existsSync(join(dir, "types.txt")), false);
  });
});
