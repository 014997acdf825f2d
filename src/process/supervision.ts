// Choosing how agent trees are sealed in (SPEC section 9): a cgroup per iteration where a cgroup v2
// hierarchy is writable, else a subreaper, else parentage and marker alone; and starting agents that way.
import { accessSync, constants } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { AgentCgroup, type CgroupCaps } from "./agent-cgroup.js";
import { setUpRunnerCgroup, type RunnerCgroup } from "./cgroup-setup.js";
import { cleanStaleCgroups, runnerCgroupName } from "./cgroup-stale.js";
import { PRCTL_SYSCALL } from "./pid1.js";
import { spawnAgent, type SpawnAgentOptions, type SpawnResult } from "./spawn-agent.js";
import { SubreaperLauncher } from "./subreaper-launcher.js";

/** How agent trees are kept: by the kernel's cgroup, under a subreaper, or by /proc parentage and marker. */
export type SupervisionMode = "cgroup" | "subreaper" | "tree";

/** The key of a run's own marker (run-engine.ts), which every agent of the run carries. */
export const RUN_MARKER_KEY = "RALPH_SUPERVISOR";
/** The key of the marker a --parallel parent adds to its child engines' processes (start-run.ts). */
export const FAN_OUT_MARKER_KEY = "RALPH_FAN_OUT";

/** The environment variable that forces a mode (auto when unset). */
export const SUPERVISION_ENV = "RALPH_SUPERVISION";
const REQUESTS = ["auto", "cgroup", "subreaper", "tree"] as const;

/** What was found, for `ralph doctor` and the run's log. */
export interface SupervisionReport {
  mode: SupervisionMode;
  /** One line: why this mode. */
  why: string;
  /** The cgroup paths tried and what happened. */
  tried: string[];
  /** Per controller: "v2", "v1 <dir>" or why it is unavailable (cgroup mode only). */
  controllers: Record<string, string>;
}

/** Where a program is on PATH, or null. */
export function findOnPath(program: string, path = process.env.PATH ?? ""): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return join(dir, program);
    } catch {
      // not here
    }
  }
  return null;
}

/** The chosen supervision of one runner; starts each agent under it. */
export class Supervision {
  private spawned = 0;
  /** Under a subreaper: per run marker, the one Perl that forks each agent's subreaper (started with the first). */
  private readonly launchers = new Map<string, SubreaperLauncher>();

  private constructor(
    readonly report: SupervisionReport,
    private readonly perl: string | null,
    private readonly runner: RunnerCgroup | null,
    private readonly caps: CgroupCaps,
  ) {}

  /**
   * Picks the mode: RALPH_SUPERVISION=cgroup|subreaper|tree forces one, auto (default) takes the first
   * that works. Returns an error text when a forced mode or a cap cannot be had here.
   */
  static async choose(input: {
    env: NodeJS.ProcessEnv;
    pid: number;
    pidStart: string | null;
    caps: CgroupCaps;
  }): Promise<Supervision | string> {
    const request = input.env[SUPERVISION_ENV] || "auto";
    if (!(REQUESTS as readonly string[]).includes(request))
      return `${SUPERVISION_ENV}=${request}: expected one of ${REQUESTS.join(", ")}`;
    const perl = findOnPath("perl", input.env.PATH ?? "");
    const linux = process.platform === "linux";
    const prctl = PRCTL_SYSCALL[process.arch];
    const tried: string[] = [];
    let cgroupWhy = "";
    if ((request === "auto" || request === "cgroup") && linux) {
      const setup = setUpRunnerCgroup(runnerCgroupName(input.pid, input.pidStart ?? "0"));
      tried.push(...setup.tried);
      if (setup.ok) {
        const { runner } = setup;
        const companions = Object.values(runner.controllers).flatMap((source) =>
          source.kind === "v1" ? [dirname(source.mount)] : [],
        );
        await cleanStaleCgroups(runner.base, companions);
        const controllers: Record<string, string> = {};
        for (const [name, source] of Object.entries(runner.controllers))
          controllers[name] =
            source.kind === "v2"
              ? "v2"
              : source.kind === "v1"
                ? `cgroup v1 at ${source.mount} (${source.why})`
                : `unavailable: ${source.why}`;
        const supervision = new Supervision(
          {
            mode: "cgroup",
            why: `cgroup v2 writable at ${runner.base}${runner.hasKill ? "" : " (no cgroup.kill: freeze + SIGKILL)"}`,
            tried,
            controllers,
          },
          perl,
          runner,
          input.caps,
        );
        const missing = supervision.missingCap();
        if (missing !== null) {
          supervision.dispose();
          return missing;
        }
        return supervision;
      }
      cgroupWhy = "no writable cgroup v2 hierarchy";
    } else if (request === "auto" || request === "cgroup") {
      cgroupWhy = "cgroups exist only on Linux";
    }
    if (request === "cgroup")
      return `${SUPERVISION_ENV}=cgroup: ${cgroupWhy}${tried.length > 0 ? ` (tried ${tried.join("; ")})` : ""}`;
    const capAsked =
      input.caps.memoryMaxBytes !== null ? "--memory-max" : input.caps.pidsMax !== null ? "--pids-max" : null;
    if (capAsked !== null) {
      return `${capAsked} needs a writable cgroup v2 hierarchy, and ${request === "auto" ? cgroupWhy : `${SUPERVISION_ENV}=${request} rules cgroups out`}${tried.length > 0 ? ` (tried ${tried.join("; ")})` : ""}`;
    }
    const because = request === "auto" ? cgroupWhy : `${SUPERVISION_ENV}=${request}`;
    if (request !== "tree" && linux && perl !== null && prctl !== undefined) {
      return new Supervision(
        { mode: "subreaper", why: `${because}; PR_SET_CHILD_SUBREAPER through ${perl}`, tried, controllers: {} },
        perl,
        null,
        input.caps,
      );
    }
    const noSubreaper = !linux
      ? "not Linux"
      : perl === null
        ? "perl not found on PATH"
        : `no prctl number known for ${process.arch}`;
    if (request === "subreaper") return `${SUPERVISION_ENV}=subreaper: ${noSubreaper}`;
    const why = request === "tree" ? because : `${because}; no subreaper: ${noSubreaper}`;
    return new Supervision(
      { mode: "tree", why: `${why}; process parentage, marker and samples`, tried, controllers: {} },
      null,
      null,
      input.caps,
    );
  }

  /** The mode in force. */
  get mode(): SupervisionMode {
    return this.report.mode;
  }

  /** Starts one agent sealed in by this supervision (spawnAgent's contract). */
  async spawn(options: SpawnAgentOptions): Promise<SpawnResult> {
    this.spawned++;
    if (this.report.mode === "subreaper" && this.perl !== null) {
      const prctl = PRCTL_SYSCALL[process.arch] ?? 0;
      return spawnAgent({
        ...options,
        seal: { kind: "subreaper", perl: this.perl, prctl, ...this.launcherFor(options, prctl) },
      });
    }
    if (this.report.mode !== "cgroup" || this.runner === null) return spawnAgent(options);
    const iteration = options.env.RALPH_ITERATION ?? String(this.spawned);
    const runId = options.env.RALPH_RUN_ID ?? "agent";
    const cgroup = AgentCgroup.create(this.runner, `ralph-${runId}-${iteration}-${this.spawned}`, this.caps);
    if (typeof cgroup === "string") return { ok: false, error: "spawn_failed", message: cgroup };
    const result = await spawnAgent({
      ...options,
      seal: { kind: "cgroup", cgroup, watchMemoryCap: this.caps.memoryMaxBytes !== null },
    });
    if (!result.ok) await cgroup.tree.remove();
    return result;
  }

  /** The guardian's extra arguments: the runner cgroup and its v1 companions, ended if the runner dies. */
  guardianArgs(): string[] {
    return this.runner === null ? [] : [this.runner.tree.dir, ...this.runner.tree.companions];
  }

  /** Removes the runner's cgroup (killing anything left in it); the runner is ending. */
  dispose(): void {
    for (const launcher of this.launchers.values()) launcher.close();
    this.launchers.clear();
    if (this.runner === null) return;
    if (this.runner.tree.populated()) this.runner.tree.kill();
    this.runner.tree.removeOnce();
  }

  /**
   * The launcher for an agent of a run (its marker is the run's): one per run, carrying that marker so that
   * the guardian finds it. A command of the person's own (a check, a notification) has a marker of its own
   * and a child engine of --parallel one per child: they start Perl each time, as before.
   */
  private launcherFor(options: SpawnAgentOptions, prctl: number): { launcher?: SubreaperLauncher } {
    if (options.marker.key !== RUN_MARKER_KEY || options.env[FAN_OUT_MARKER_KEY] !== undefined || this.perl === null)
      return {};
    let launcher = this.launchers.get(options.marker.value);
    if (!launcher) {
      launcher = new SubreaperLauncher(this.perl, prctl, {
        ...options.env,
        [options.marker.key]: options.marker.value,
      });
      this.launchers.set(options.marker.value, launcher);
    }
    return { launcher };
  }

  /** Why a requested cap cannot be applied here, or null. */
  private missingCap(): string | null {
    const wanted: Array<["memory" | "pids", string, boolean]> = [
      ["memory", "--memory-max", this.caps.memoryMaxBytes !== null],
      ["pids", "--pids-max", this.caps.pidsMax !== null],
    ];
    for (const [name, flag, asked] of wanted) {
      const source = this.runner?.controllers[name];
      if (asked && source?.kind === "none") return `${flag} needs the ${name} controller: ${source.why}`;
    }
    return null;
  }
}
