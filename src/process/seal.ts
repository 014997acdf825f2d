// Starting an agent sealed in by the kernel: inside its own cgroup, or as the child of a subreaper.
import type { ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import type { AgentCgroup, ResourceFigures } from "./agent-cgroup.js";
import { endCgroup } from "./end-cgroup.js";
import type { AgentExit, AgentProcess } from "./agent-process.js";
import type { SubreaperLauncher } from "./subreaper-launcher.js";

/** How an agent is sealed in: born in its cgroup (made before the start), or the child of a subreaper. */
export type Seal =
  | { kind: "cgroup"; cgroup: AgentCgroup; watchMemoryCap: boolean; sampleMs?: number }
  | { kind: "subreaper"; perl: string; prctl: number; launcher?: SubreaperLauncher };

/** Replaces the child's stdout and stderr by pass-through streams already reading from them. */
export function keepOutput(child: ChildProcess): void {
  for (const name of ["stdout", "stderr"] as const) {
    const source = child[name];
    if (source === null) continue;
    const kept = new PassThrough();
    source.on("error", (error) => kept.destroy(error));
    source.pipe(kept);
    Object.defineProperty(child, name, { value: kept });
  }
}

/** Writes the prompt to the agent's stdin and closes it. */
export function feedStdin(child: ChildProcess, text: string | Buffer | null): void {
  if (!child.stdin) return;
  // An agent that exits without reading its stdin makes the write fail with EPIPE: not our failure.
  child.stdin.on("error", () => undefined);
  child.stdin.end(text ?? "");
}

/** The parts of a started agent process a sealed agent is made of. */
export interface StartedChild {
  pid: number;
  child: ChildProcess;
  exited: Promise<AgentExit>;
  closed: Promise<AgentExit>;
  stdin: string | Buffer | null;
}

/** An agent running in its own cgroup: members, ending and figures all come from the kernel. */
export function sealedAgent(seal: Extract<Seal, { kind: "cgroup" }>, started: StartedChild): AgentProcess {
  const { cgroup } = seal;
  let final: ResourceFigures | null = null;
  let capHit: () => void = () => undefined;
  const memoryCapHit = new Promise<void>((resolve) => (capHit = resolve));
  // A small file or two per tick: the kernel keeps no peak of processes (pids.peak counts threads).
  const watch = (): void => {
    cgroup.sample();
    if (seal.watchMemoryCap && cgroup.oomKills() > 0 && cgroup.ownCapReached()) capHit();
  };
  watch();
  const timer = setInterval(watch, seal.sampleMs ?? 200);
  timer.unref();
  feedStdin(started.child, started.stdin);
  return {
    pid: started.pid,
    stdout: started.child.stdout as NodeJS.ReadableStream,
    stderr: started.child.stderr as NodeJS.ReadableStream,
    exited: started.exited,
    closed: started.closed,
    inventory: null,
    async end(options) {
      watch();
      const report = await endCgroup(cgroup.tree, options);
      clearInterval(timer);
      if (final === null) {
        final = cgroup.figures();
        // The root stays in the cgroup as a zombie until Node reaps it ('exit'); then the directory can go.
        await Promise.race([started.exited, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
        await cgroup.tree.remove();
      }
      return report;
    },
    resources: () => final ?? cgroup.figures(),
    memoryCapHit,
  };
}
