// Removing the cgroups of runners that died (a SIGKILLed runner whose guardian is gone too).
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { CgroupTree } from "./cgroup-tree.js";
import { isAlive, readProcess } from "./proc-table.js";

const RUNNER_NAME = /^ralph-(\d+)-(\d+)-(\d+)$/;

/** This process's pid namespace (its inode number), or "0" when unknown. */
function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
  } catch {
    return "0";
  }
}

/**
 * The name of a runner's parent cgroup: its pid namespace, pid and start time, so a dead runner can be
 * told apart (a pid means something only in its own namespace: runners in containers share the hierarchy).
 */
export function runnerCgroupName(pid: number, startTime: string): string {
  return `ralph-${pidNamespace()}-${pid}-${startTime}`;
}

/** Whether some process (the dead runner's guardian) names `dir` on its command line. */
function guardedBy(dir: string): boolean {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        readFileSync(join("/proc", entry, "cmdline"), "utf8")
          .split("\0")
          .includes(dir)
      )
        return true;
    } catch {
      // gone
    }
  }
  return false;
}

/**
 * Kills and removes every `ralph-NS-PID-START` cgroup in `base` whose runner (in our pid namespace)
 * is not alive, with its v1 companions in `companionBases`; one still being ended by its guardian is left to it.
 * Returns the names removed.
 */
export async function cleanStaleCgroups(base: string, companionBases: string[]): Promise<string[]> {
  let entries: string[];
  try {
    entries = readdirSync(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const namespace = pidNamespace();
  for (const name of entries) {
    const match = RUNNER_NAME.exec(name);
    if (!match || match[1] !== namespace) continue;
    const info = readProcess(Number(match[2]));
    if (isAlive(info) && info?.startTime === match[3]) continue;
    const tree = new CgroupTree(
      join(base, name),
      companionBases.map((dir) => join(dir, name)),
    );
    if (tree.populated()) {
      if (guardedBy(tree.dir)) continue;
      tree.kill();
      const deadline = performance.now() + 1000;
      while (tree.populated() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (await tree.remove()) removed.push(name);
  }
  return removed;
}
