// state.md as the engine sees it: the plan in force, kept by the StateGuard, and `ralph set` requests served.
import { basename } from "node:path";
import { setRequesterRefusal } from "../control/set-requester.js";
import type { TreeMarker } from "../process/inventory.js";
import type { Plan } from "../store/plan-file.js";
import type { RunPaths } from "../store/run-paths.js";
import { serveSetRequests, type ServedRequest } from "../control/serve-set-requests.js";
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
    // The request file is agent-writable: the process it names is checked, not the file.
    serveSetRequests: () =>
      serveSetRequests(paths.requests, guard, (request) =>
        setRequesterRefusal(request, basename(paths.dir), runnerPid, marker),
      ),
  };
}
