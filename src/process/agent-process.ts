// A running agent tree as its owner sees it, and how its root ended.
import { constants } from "node:os";
import type { ResourceFigures } from "./agent-cgroup.js";
import type { ProcessInventory } from "./inventory.js";
import type { EndTreeOptions, EndTreeReport } from "./kill-tree.js";

/** How the root process ended. */
export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** An exit as a subreaper or the launcher reports it (a signal by number) as an AgentExit. */
export function exitOf(exit: { code: number | null; signal: number | null }): AgentExit {
  const signal =
    exit.signal === null
      ? null
      : ((Object.entries(constants.signals).find(([, value]) => value === exit.signal)?.[0] ??
          null) as NodeJS.Signals | null);
  return { code: exit.code, signal };
}

/** A running agent tree. */
export interface AgentProcess {
  pid: number;
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  /** Resolves when the root process exits (never rejects); output may still be arriving. */
  exited: Promise<AgentExit>;
  /** Resolves once the root has exited and stdout/stderr are closed (a leftover holding them delays it until end()). */
  closed: Promise<AgentExit>;
  /** The sampled /proc inventory; null in a cgroup, where the kernel keeps the membership. */
  inventory: ProcessInventory | null;
  /** Ends the whole tree; safe after exit (reaps leftovers) and more than once. */
  end(options: EndTreeOptions): Promise<EndTreeReport>;
  /** What the tree used (cgroup only; final once end() has resolved). */
  resources(): ResourceFigures | null;
  /** Resolves when the kernel killed a process for the memory cap (cgroup with a memory cap only). */
  memoryCapHit: Promise<void>;
}
