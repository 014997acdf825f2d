// One cgroup v2 directory (with, on hybrid hosts, its v1 companions) treated as a process tree:
// its members, killing all of them at once, and removing it.
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readPids, readText, removeDir, writeControl } from "./cgroup-fs.js";

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name));
  } catch {
    return [];
  }
}

/** A cgroup and its descendants; `companions` are v1 directories of the same processes (memory, pids). */
export class CgroupTree {
  constructor(
    readonly dir: string,
    readonly companions: string[] = [],
  ) {}

  /** Creates the directories; returns the failing path and error, or null. */
  create(): string | null {
    for (const dir of [this.dir, ...this.companions]) {
      try {
        mkdirSync(dir);
      } catch (error) {
        return `${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
      }
    }
    return null;
  }

  /** Every pid in this cgroup and its descendant cgroups. */
  members(): number[] {
    const pids: number[] = [];
    const walk = (dir: string): void => {
      pids.push(...readPids(dir));
      for (const child of subdirs(dir)) walk(child);
    };
    walk(this.dir);
    return pids;
  }

  /** Whether any process is left (cgroup.events "populated", which counts descendants). */
  populated(): boolean {
    const events = readText(join(this.dir, "cgroup.events"));
    if (events === null) return existsSync(this.dir) && this.members().length > 0;
    return /^populated 1$/m.test(events);
  }

  /**
   * SIGKILLs every member at once: cgroup.kill (Linux 5.14+), else freeze the cgroup so
   * nothing can fork, SIGKILL each member (a frozen process still dies of SIGKILL) and thaw.
   */
  kill(): "cgroup.kill" | "freeze" {
    // The runner is inside only while it forks an agent; a cgroup holding it is never killed whole.
    const holdsRunner = this.members().includes(process.pid);
    if (!holdsRunner && writeControl(this.dir, "cgroup.kill", "1") === null) return "cgroup.kill";
    writeControl(this.dir, "cgroup.freeze", "1");
    for (const pid of this.members()) {
      if (pid === process.pid) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    writeControl(this.dir, "cgroup.freeze", "0");
    return "freeze";
  }

  /** Removes the (empty) directories, deepest first, once; "busy" while an exited task is not yet reaped. */
  removeOnce(): "gone" | "busy" | "failed" {
    let outcome: "gone" | "busy" | "failed" = "gone";
    const removeTree = (dir: string): void => {
      let result = removeDir(dir);
      // A cgroup with cgroups of its own (an agent may make them) cannot go before them. Most have none:
      // trying first spares listing the directory at every iteration.
      if (result !== "gone") {
        const children = subdirs(dir);
        for (const child of children) removeTree(child);
        if (children.length > 0) result = removeDir(dir);
      }
      if (result === "failed" || (result === "busy" && outcome === "gone")) outcome = result;
    };
    removeTree(this.dir);
    for (const dir of this.companions) removeTree(dir);
    return outcome;
  }

  /** Removes the directories, retrying while busy for up to `waitMs`; true when all are gone. */
  async remove(waitMs = 1000): Promise<boolean> {
    const deadline = performance.now() + waitMs;
    for (;;) {
      const outcome = this.removeOnce();
      if (outcome !== "busy" || performance.now() >= deadline) return outcome === "gone";
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
}
