// How a run's processes are started: its agent (in its sandbox when it has one), its reviewers (the work
// tree read-only) and the person's own commands (never sandboxed), all under the run's supervision.
import type { EngineIo } from "../engine/engine-io.js";
import type { SpawnAgentOptions } from "../process/spawn-agent.js";
import type { Supervision } from "../process/supervision.js";
import type { Sandbox } from "../sandbox/sandbox.js";

/** The spawn half of a run's engine io; `mark` adds what every process of the run carries (a child's parent marker). */
export function runSpawners(
  supervision: Supervision,
  sandbox: Sandbox | null,
  mark: (options: SpawnAgentOptions) => SpawnAgentOptions = (options) => options,
): Pick<EngineIo, "spawnAgent" | "spawnReviewer" | "spawnOwn" | "sandbox"> {
  const supervised = (options: SpawnAgentOptions) => supervision.spawn(options);
  if (!sandbox)
    return {
      spawnAgent: (options) => supervised(mark(options)),
      spawnReviewer: (options) => supervised(mark(options)),
    };
  return {
    sandbox,
    spawnAgent: (options) => sandbox.spawn(mark(options), supervised),
    spawnOwn: (options) => supervised(mark(options)),
    spawnReviewer: (options, agent) => sandbox.spawn(mark(options), supervised, { readOnly: true, agent }),
  };
}
