// One iteration's agent cgroup: made under the runner's cgroup with its caps written before the agent is
// forked in it (held back while the runner, which forks from inside, is there too: see create), its
// figures read (CPU, peak memory, peak process count) and its memory cap watched.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { readKey, readNumber, readText, writeControl } from "./cgroup-fs.js";
import type { ControllerSource, RunnerCgroup } from "./cgroup-setup.js";
import { CgroupTree } from "./cgroup-tree.js";

/** Limits for the agent tree (null = none). */
export interface CgroupCaps {
  memoryMaxBytes: number | null;
  pidsMax: number | null;
}

/** What an agent tree used, as the kernel counted it (null = not available here). */
export interface ResourceFigures {
  cpu_seconds: number | null;
  peak_memory_bytes: number | null;
  /** The most processes (not threads) seen in the tree at once: cgroup.procs, sampled. */
  peak_pids: number | null;
  /** Processes the kernel's OOM killer ended (under ralph's memory cap or a limit outside ralph). */
  oom_kills: number;
}

/** The files of one controller in v2 and v1 spelling. */
const FILES = {
  memory: {
    v2: { peak: "memory.peak", current: "memory.current", max: "memory.max", events: "memory.events" },
    v1: {
      peak: "memory.max_usage_in_bytes",
      current: "memory.usage_in_bytes",
      max: "memory.limit_in_bytes",
      events: "memory.oom_control",
    },
  },
  pids: {
    v2: { peak: "pids.peak", current: "pids.current", max: "pids.max", events: "pids.events" },
    v1: { peak: "pids.peak", current: "pids.current", max: "pids.max", events: "pids.events" },
  },
};

type Files = (typeof FILES)["memory"]["v2"];

/** The directory and file names of one controller for an agent cgroup, or null when unavailable. */
function locate(
  source: ControllerSource,
  v2Dir: string,
  name: string,
  controller: keyof typeof FILES,
): { dir: string; files: Files } | null {
  if (source.kind === "v2") return { dir: v2Dir, files: FILES[controller].v2 };
  if (source.kind === "v1") return { dir: join(source.mount, name), files: FILES[controller].v1 };
  return null;
}

/** The runner's thread count (they all count in a pids cgroup it steps into); 16 when unknown. */
function runnerThreads(): number {
  const threads = Number(/^Threads:\s*(\d+)$/m.exec(readText("/proc/self/status") ?? "")?.[1]);
  return Number.isInteger(threads) && threads > 0 ? threads : 16;
}

/** Per runner cgroup: whether its agent cgroups lack a memory peak file (the kernel's, the same for each one). */
const sampledPeaks = new WeakMap<RunnerCgroup, boolean>();

/** An agent's cgroup for one iteration. */
export class AgentCgroup {
  private peakMemory = 0;
  /**
   * The most processes seen in the tree at once. The kernel's pids figures count every task, so a node
   * agent's worker threads (and the runner's threads while it forks from inside) would count as processes:
   * the count is read from cgroup.procs instead, which lists processes alone.
   */
  private peakProcesses = 0;
  /** Whether an agent was forked in here (then it counts as one process even when gone before a sample). */
  private forked = false;

  private constructor(
    readonly tree: CgroupTree,
    /** The runner's own cgroup directory for each of the tree's directories (v2, then companions). */
    private readonly homes: string[],
    private readonly memory: { dir: string; files: Files } | null,
    private readonly pids: { dir: string; files: Files } | null,
    private readonly sampled: boolean,
    private readonly caps: CgroupCaps,
  ) {}

  /** Whether ralph ended the tree itself because its usage was already above the cap when it was written. */
  private capForced = false;

  /** Makes `name` under the runner cgroup with the caps set; an error text when that fails. */
  static create(runner: RunnerCgroup, name: string, caps: CgroupCaps): AgentCgroup | string {
    const v2Dir = join(runner.tree.dir, name);
    const memory = locate(runner.controllers.memory, v2Dir, name, "memory");
    const pids = locate(runner.controllers.pids, v2Dir, name, "pids");
    const companions = [memory, pids]
      .filter((entry) => entry !== null && entry.dir !== v2Dir)
      .map((entry) => (entry as { dir: string }).dir);
    const tree = new CgroupTree(v2Dir, companions);
    const failed = tree.create();
    if (failed !== null) {
      tree.removeOnce();
      return `cannot make the agent cgroup ${failed}`;
    }
    // The runner steps inside to fork the agent (forkInside). Until it has left, the memory cap stays off
    // (an agent allocating at once would have the OOM killer pick the runner, the larger process), and its
    // threads count against the pids cap: one below them is raised to leave room for the agent alone, so
    // the agent never holds more than N. Both files are written here: a cap that cannot be set is an
    // error before anything runs.
    const limits: Array<[{ dir: string; files: Files } | null, string | null, string]> = [
      [memory, caps.memoryMaxBytes === null ? null : memory?.files === FILES.memory.v2 ? "max" : "-1", "memory"],
      [pids, caps.pidsMax === null ? null : String(Math.max(caps.pidsMax, runnerThreads() + 1)), "pids"],
    ];
    for (const [controller, value, label] of limits) {
      if (value === null) continue;
      const error =
        controller === null ? "controller unavailable" : writeControl(controller.dir, controller.files.max, value);
      if (error !== null) {
        tree.removeOnce();
        return `cannot set the ${label} cap in ${controller?.dir ?? v2Dir} (${error})`;
      }
    }
    const homes = [v2Dir, ...companions].map((dir) => runner.homes.get(dirname(dir)) ?? dirname(dir));
    let sampled = sampledPeaks.get(runner);
    if (sampled === undefined) {
      sampled = !hasPeak(memory);
      sampledPeaks.set(runner, sampled);
    }
    return new AgentCgroup(tree, homes, memory, pids, sampled, caps);
  }

  /**
   * Runs `fork` (a synchronous spawn) with the runner inside this cgroup, so the child is born in it
   * and never runs a single instruction outside; the runner moves back at once (a move is ~0.1 ms).
   * Returns fork's value, or the error text when the runner could not step in.
   */
  forkInside<T>(fork: () => T): { ok: true; value: T } | { ok: false; message: string } {
    const dirs = [this.tree.dir, ...this.tree.companions];
    const entered: number[] = [];
    let left = true;
    try {
      for (let i = 0; i < dirs.length; i++) {
        const error = writeControl(dirs[i] as string, "cgroup.procs", String(process.pid));
        if (error !== null) return { ok: false, message: `cannot enter the agent cgroup ${dirs[i]} (${error})` };
        entered.push(i);
      }
      const value = fork();
      this.forked = true;
      return { ok: true, value };
    } finally {
      for (const i of entered.reverse()) {
        const home = this.homes[i] as string;
        if (
          writeControl(home, "cgroup.procs", String(process.pid)) !== null &&
          writeControl(home, "cgroup.procs", String(process.pid)) !== null
        )
          left = false;
      }
      if (left) this.writeCaps();
      // The agent alone, at once: the runner is out again, so cgroup.procs lists the agent's processes only.
      if (left) this.sample();
    }
  }

  /**
   * Writes the caps held back while the runner was inside. Above usage, v2 reclaims and OOM-kills inside
   * the cgroup before the write returns; v1 refuses it (EBUSY): then the tree is ended here, as the kernel
   * would have ended it, and counted so. A pids cap below usage stops further forks and kills nothing.
   */
  private writeCaps(): void {
    if (this.pids !== null && this.caps.pidsMax !== null)
      writeControl(this.pids.dir, this.pids.files.max, String(this.caps.pidsMax));
    if (this.memory === null || this.caps.memoryMaxBytes === null) return;
    if (writeControl(this.memory.dir, this.memory.files.max, String(this.caps.memoryMaxBytes)) !== "EBUSY") return;
    this.capForced = true;
    this.tree.kill();
  }

  /**
   * Records the current process count, and the current memory where the kernel keeps no peak of it: called
   * on a timer always, as the kernel keeps no peak of processes (only of tasks, which counts threads).
   */
  sample(): void {
    if (this.sampled && this.memory !== null) {
      const memory = readNumber(join(this.memory.dir, this.memory.files.current));
      if (memory !== null) this.peakMemory = Math.max(this.peakMemory, memory);
    }
    this.peakProcesses = Math.max(this.peakProcesses, this.tree.members().length);
  }

  /** Processes killed by the kernel for the memory cap so far (one more when ralph ended a tree already past it). */
  oomKills(): number {
    if (this.memory === null) return 0;
    return (readKey(join(this.memory.dir, this.memory.files.events), "oom_kill") ?? 0) + (this.capForced ? 1 : 0);
  }

  /**
   * Whether this cgroup's own memory cap was what the kernel enforced: v2 counts `oom` events of a
   * cgroup's own limit in its memory.events, v1 counts hits of its own limit in memory.failcnt. A kill
   * under a limit further up (a container's) counts in `oom_kill` alone.
   */
  ownCapReached(): boolean {
    if (this.memory === null) return false;
    if (this.capForced) return true;
    const own =
      this.memory.files === FILES.memory.v2
        ? readKey(join(this.memory.dir, "memory.events"), "oom")
        : readNumber(join(this.memory.dir, "memory.failcnt"));
    return (own ?? 0) > 0;
  }

  /** The figures so far (call before remove()). */
  figures(): ResourceFigures {
    const usage = readKey(join(this.tree.dir, "cpu.stat"), "usage_usec");
    const memoryPeak = this.memory ? readNumber(join(this.memory.dir, this.memory.files.peak)) : null;
    return {
      cpu_seconds: usage === null ? null : Math.round(usage / 1000) / 1000,
      peak_memory_bytes: memoryPeak ?? (this.memory && this.peakMemory > 0 ? this.peakMemory : null),
      peak_pids: this.forked ? Math.max(1, this.peakProcesses) : null,
      oom_kills: this.oomKills(),
    };
  }
}

/** Whether the kernel keeps a peak figure for a controller's directory (memory.peak, pids.peak, or v1's own). */
function hasPeak(controller: { dir: string; files: Files } | null): boolean {
  return controller !== null && existsSync(join(controller.dir, controller.files.peak));
}
