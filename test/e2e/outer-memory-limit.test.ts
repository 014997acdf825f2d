// An iteration killed under a memory limit outside ralph (a container's) is not blamed on --memory-max.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, RALPH, readEvents, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-outer-memory-");

/** A new memory cgroup below this process's own, limited to `bytes` (v1 memory hierarchy, else v2), or why not. */
function outerCgroup(bytes: number): { procs: string; remove: () => void } | string {
  let lines: string[];
  try {
    lines = readFileSync("/proc/self/cgroup", "utf8").trim().split("\n");
  } catch {
    return "no /proc/self/cgroup";
  }
  const v1 = lines.find((line) => line.split(":")[1]?.split(",").includes("memory"));
  const v2 = lines.find((line) => line.startsWith("0::"));
  const [base, limitFile] = v1
    ? [join("/sys/fs/cgroup/memory", v1.split(":")[2] ?? "/"), "memory.limit_in_bytes"]
    : v2
      ? [join("/sys/fs/cgroup", v2.slice(3)), "memory.max"]
      : ["", ""];
  if (!base || !existsSync(join(base, limitFile))) return "no memory cgroup of our own to nest a limit in";
  const dir = join(base, `ralph-outer-${process.pid}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, limitFile), String(bytes));
  } catch (error) {
    return `cannot make a limited cgroup here (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  return {
    procs: join(dir, "cgroup.procs"),
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // Busy while a process is still in it: best effort, the next boot clears it.
      }
    },
  };
}

const outer = process.platform === "linux" ? outerCgroup(300 * 2 ** 20) : "Linux only";
after(() => {
  if (typeof outer !== "string") outer.remove();
});

/** ralph run inside the limited cgroup, with an agent that allocates 600 MB; its iteration_ended event. */
function runInside(procs: string, memoryMax: string): Record<string, unknown> | undefined {
  const dir = project();
  const hog = `perl -e '$x = "a" x (600 * 1024 * 1024); sleep 30'; exit 1`;
  // The shell joins the limited cgroup, then becomes ralph: ralph, its guardian and the agent all live under the limit.
  const script = `echo $$ > "$1"; shift; exec "$@"`;
  const argv = [
    "-c",
    script,
    "sh",
    procs,
    process.execPath,
    RALPH,
    "run",
    "-n",
    "1",
    "--memory-max",
    memoryMax,
    "--grace",
    "200ms",
    "go",
    "--",
    "bash",
    "-c",
    hog,
  ];
  const ran = spawnSync("sh", argv, {
    cwd: dir,
    env: cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(ran.status, 3, ran.stderr + ran.stdout);
  const runs = join(dir, ".ralph", "runs");
  return readEvents(join(runs, readdirSync(runs)[0] ?? "")).find((event) => event.type === "iteration_ended");
}

test(
  "a process killed under an outer memory limit is reported as such, not as --memory-max; ralph's own cap still is",
  { skip: typeof outer === "string" ? outer : false },
  () => {
    if (typeof outer === "string") return;
    const outerKill = runInside(outer.procs, "2G");
    assert.ok(
      ((outerKill?.resources as { oom_kills: number } | undefined)?.oom_kills ?? 0) >= 1,
      JSON.stringify(outerKill),
    );
    assert.notEqual(outerKill?.ended_by, "memory_cap");
    assert.match(
      String(outerKill?.error),
      /out of memory: the kernel killed a process under a memory limit outside ralph/,
    );
    assert.doesNotMatch(String(outerKill?.error), /memory cap reached/);
    // Known-false control: the same agent under ralph's own, smaller cap is blamed on --memory-max.
    const ownKill = runInside(outer.procs, "64M");
    assert.equal(ownKill?.ended_by, "memory_cap");
    assert.match(String(ownKill?.error), /memory cap reached \(--memory-max\)/);
  },
);
