// A throwaway cgroup v2 for the `cgroup.kill` floor, where the hierarchy is mounted, writable and new enough.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

/** Where the cgroup v2 hierarchy is mounted, from /proc/self/mountinfo, or null. */
function cgroup2Mount(): string | null {
  try {
    for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
      const [before, after] = line.split(" - ");
      if (after?.startsWith("cgroup2 ")) return before?.split(" ")[4] ?? null;
    }
  } catch {
    return null;
  }
  return null;
}

/** This process's own cgroup v2 path relative to the mount ("0::/path"), or "/". */
function ownCgroup(): string {
  try {
    const line = readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((entry) => entry.startsWith("0::"));
    return line ? line.slice(3) : "/";
  } catch {
    return "/";
  }
}

/** Creates an empty cgroup with `cgroup.kill` next to ours; null (with why) when that is not possible here. */
export function createCgroup(): { dir: string } | { dir: null; why: string } {
  if (process.platform !== "linux") return { dir: null, why: "not Linux" };
  const mount = cgroup2Mount();
  if (!mount) return { dir: null, why: "no cgroup v2 mount" };
  const dir = join(mount, ownCgroup(), `ralph-bench-${randomBytes(4).toString("hex")}`);
  try {
    mkdirSync(dir);
  } catch (error) {
    return { dir: null, why: `cgroup not writable (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
  if (!existsSync(join(dir, "cgroup.kill"))) {
    removeCgroup(dir);
    return { dir: null, why: "kernel has no cgroup.kill (needs Linux 5.14)" };
  }
  return { dir };
}

/** Kills every process in the cgroup at once. */
export function killCgroup(dir: string): void {
  writeFileSync(join(dir, "cgroup.kill"), "1");
}

/** Whether the cgroup still holds a process. */
export function cgroupPopulated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(join(dir, "cgroup.events"), "utf8"));
  } catch {
    return false;
  }
}

/** Removes an empty cgroup (best effort). */
export function removeCgroup(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // still populated or already gone
  }
}
