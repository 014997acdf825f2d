// state.md as the engine sees it: the plan in force, kept by the StateGuard, and `ralph set` requests served.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { isAlive, readEnvMarker, readProcess } from "../process/proc-table.js";
import type { TreeMarker } from "../process/inventory.js";
import type { Plan } from "../store/plan-file.js";
import type { RunPaths } from "../store/run-paths.js";
import { serveSetRequests, type ServedRequest } from "../store/serve-set-requests.js";
import { StateGuard, type BoundaryRead, type RejectedChange } from "../store/state-guard.js";

/** The plan in force and the ways it changes. */
export interface PlanWatch {
  readonly plan: Plan;
  /** At a boundary (no agent running): a person's edit is accepted when it parses. */
  atBoundary(): BoundaryRead;
  /** Right after an agent iteration: a change written while it ran only tightens the plan. */
  afterIteration(iteration: number): RejectedChange | null;
  /** Applies pending `ralph set` requests from people (never from a process of this run's agent). */
  serveSetRequests(): ServedRequest[];
}

/** The real PlanWatch of a run directory; `runnerPid` and `marker` tell the run's own processes apart. */
export function watchPlan(paths: RunPaths, plan: Plan, runnerPid: number, marker: TreeMarker): PlanWatch {
  const guard = new StateGuard(paths.state, plan);
  return {
    get plan() {
      return guard.state;
    },
    atBoundary: () => guard.atBoundary(),
    afterIteration: (iteration) => guard.afterIteration(iteration),
    serveSetRequests: () =>
      serveSetRequests(paths.dir, guard, (request) => {
        const info = readProcess(request.pid);
        if (!isAlive(info) || info?.startTime !== request.pid_start) return "the requesting process is gone";
        // The request file is agent-writable: the pid it names must really be a `ralph set` of this run.
        if (!isSetCommandFor(request.pid, paths.dir)) return "refused: the requesting process is not ralph set for this run";
        if (readEnvMarker(request.pid, marker.key, marker.value) === "yes" || descendsFrom(request.pid, runnerPid)) {
          return "refused: the request comes from this run's agent";
        }
        return null;
      }),
  };
}

/** Whether `pid`'s command line is `… set RUN …` naming this run (unreadable, as off Linux: trusted as before). */
function isSetCommandFor(pid: number, runDir: string): boolean {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return process.platform !== "linux";
  }
  const at = argv.indexOf("set");
  // `ralph set RUN k=v`, or `ralph set k=v` naming no run (the single active one, this one).
  const next = argv[at + 1];
  return at > 0 && (next === basename(runDir) || next?.includes("=") === true);
}

/** Whether `pid` is a descendant of `ancestor` (by parentage, as far as it can be followed). */
function descendsFrom(pid: number, ancestor: number): boolean {
  let current = readProcess(pid);
  for (let depth = 0; current && depth < 128; depth++) {
    if (current.ppid === ancestor) return true;
    if (current.ppid <= 1) return false;
    current = readProcess(current.ppid);
  }
  return false;
}
