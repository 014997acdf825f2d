// The sandbox holds whoever starts ralph (SPEC section 15, round 2): as root and as an ordinary user, the
// agent inside holds no capability, so it can neither mount nor unmount (the private /tmp, the cover over a
// secret), nor write a cgroup's process list, nor signal ralph outside its PID namespace. The known-false
// control: the same agent unsandboxed as root holds root's capabilities, mounts and signals ralph.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chownSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, RALPH } from "../helpers/cli.js";
import { within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();
const root = process.getuid?.() === 0;
const NOBODY = 65534;

/** Why a sandbox cannot be built here, or null. */
function sandboxMissing(): string | null {
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "doctor says nothing"}`;
}

// Each line: what the agent tried and whether it got through. /tmp and the cgroup files are only tried
// sandboxed (outside they are the machine's own).
const PROBE = `{
grep CapEff /proc/self/status
mkdir -p m; if mount -t tmpfs hostile m 2>/dev/null; then echo mount=ok; umount m; else echo mount=refused; fi
pid=$(grep -o '"pid": *[0-9]*' "$RALPH_RUN_DIR/status.json" | head -1 | grep -o '[0-9]*$')
if kill -0 "$pid" 2>/dev/null; then echo signal_ralph=ok; else echo signal_ralph=refused; fi
if [ "$1" = in ]; then
  if umount -l /tmp 2>/dev/null; then echo umount_tmp=ok; else echo umount_tmp=refused; fi
  if echo $$ > /sys/fs/cgroup/cgroup.procs 2>/dev/null; then echo cgroup=ok; else echo cgroup=refused; fi
fi
} > probe.txt`;

/** One iteration of the probe agent, sandboxed or not, as root or as nobody; what it found. */
async function probe(sandboxed: boolean, asNobody: boolean): Promise<Map<string, string>> {
  const { dir } = cleanup.project("ralph-sandbox-root-");
  const { dir: home } = cleanup.project("ralph-sandbox-root-home-");
  if (asNobody) for (const path of [dir, join(dir, "agent"), home]) chownSync(path, NOBODY, NOBODY);
  mkdirSync(join(home, ".ssh"));
  const args = [
    "run",
    "--name",
    "x",
    "-n",
    "1",
    "--agent",
    "command",
    "go",
    "--",
    "/bin/sh",
    "-c",
    PROBE,
    "probe",
    sandboxed ? "in" : "out",
  ];
  // The control leaves the sandbox by the environment, which says so whatever the default is.
  const env = cleanEnv({
    HOME: home,
    RALPH_SANDBOX: sandboxed ? "on" : "off",
    ...(asNobody ? { RALPH_SUPERVISION: "subreaper", XDG_STATE_HOME: join(home, "state") } : {}),
  });
  const ralph = asNobody
    ? cleanup.process(
        "setpriv",
        ["--reuid", String(NOBODY), "--regid", String(NOBODY), "--clear-groups", process.execPath, RALPH, ...args],
        { cwd: dir, env },
      )
    : cleanup.ralph(args, dir, env);
  const result = await within(ralph.done, 60_000, "ralph's exit");
  assert.equal(result.code, 3, result.stdout + result.stderr);
  const lines = readFileSync(join(dir, "probe.txt"), "utf8").trim().split("\n");
  return new Map(lines.map((line) => line.split(/[=:]\s*/) as [string, string]));
}

function assertWalled(found: Map<string, string>): void {
  assert.equal(found.get("CapEff"), "0000000000000000", JSON.stringify([...found]));
  assert.equal(found.get("mount"), "refused");
  assert.equal(found.get("umount_tmp"), "refused");
  assert.equal(found.get("cgroup"), "refused");
  assert.equal(found.get("signal_ralph"), "refused");
}

describe(
  "--sandbox leaves the agent no capability",
  { concurrency: 2, skip: process.platform !== "linux" ? "Linux only" : (sandboxMissing() ?? false) },
  () => {
    test(
      "started as root: no capability inside; mount, umount and a cgroup move fail",
      { skip: root ? false : "needs root" },
      async () => {
        assertWalled(await probe(true, false));
      },
    );

    test(
      "started as an unprivileged user (setpriv): the same",
      { skip: root ? false : "needs root to become another user" },
      async () => {
        assertWalled(await probe(true, true));
      },
    );

    test(
      "control: unsandboxed as root, the same agent holds root's capabilities and mounts",
      { skip: root ? false : "needs root" },
      async () => {
        const found = await probe(false, false);
        assert.notEqual(found.get("CapEff"), "0000000000000000");
        assert.equal(found.get("mount"), "ok");
        assert.equal(found.get("signal_ralph"), "ok");
      },
    );
  },
);
