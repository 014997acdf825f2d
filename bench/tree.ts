// The benchmark's agent tree: a shell root, ten shells under it and sleeps under those, 200
// processes in all, each carrying a per-tree marker and writing its pid to a file once started.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { commOf, identify, killAll, liveCarriers, type Identity } from "./proc-watch.js";
import { sleep } from "./stats.js";

/** The marker variable every tree process carries (found again by `liveCarriers`). */
export const TREE_MARKER = "RALPH_BENCH_TREE";

/** What kind of tree to build. */
export interface TreeSpec {
  /** Total processes, root included. */
  size: number;
  /** One sleep ignores TERM and INT (the disposition survives exec). */
  ignorer: boolean;
  /** Directory for the pid file. */
  dir: string;
  /** A cgroup v2 directory the root moves itself into before forking, so `cgroup.kill` reaches all. */
  cgroup?: string;
}

/** A tree described by `treeArgv`, with the marker value and pid file it uses. */
export interface TreePlan {
  argv: string[];
  marker: string;
  pidFile: string;
  size: number;
}

const SHELLS = 10;
const RECORD = 'echo $$ >> "$PIDFILE"';
// Each leaf shell starts $1 sleeps and waits for them.
const LEAF = `${RECORD}; j=0; while [ $j -lt $1 ]; do sleep 1000 & echo $! >> "$PIDFILE"; j=$((j+1)); done; wait`;

const planned = new Set<string>();

/** SIGKILLs whatever is left of every tree planned so far (for an aborted benchmark). */
export function killTrees(): void {
  for (const marker of planned) killAll(liveCarriers(TREE_MARKER, marker));
  planned.clear();
}

/** The argv of a tree: `env MARKER=… PIDFILE=… sh -c ROOT …` (env execs sh, so the root pid is the shell's). */
export function treeArgv(spec: TreeSpec): TreePlan {
  const marker = randomBytes(6).toString("hex");
  const pidFile = join(spec.dir, `tree-${marker}.pids`);
  planned.add(marker);
  let sleeps = spec.size - 1 - SHELLS - (spec.ignorer ? 1 : 0);
  if (sleeps < SHELLS) throw new Error(`a tree needs more than ${2 * SHELLS + 1} processes`);
  const counts: string[] = [];
  for (let i = 0; i < SHELLS; i++) {
    const count = Math.floor(sleeps / (SHELLS - i));
    counts.push(String(count));
    sleeps -= count;
  }
  const join_ = spec.cgroup ? 'echo $$ > "$CGROUP/cgroup.procs"; ' : "";
  const ignorer = spec.ignorer ? `(trap "" TERM INT; exec sleep 1000) & echo $! >> "$PIDFILE"; ` : "";
  const root = `${join_}${RECORD}; leaf=$1; shift; ${ignorer}for n in "$@"; do sh -c "$leaf" leaf "$n" & done; wait`;
  const env = [`${TREE_MARKER}=${marker}`, `PIDFILE=${pidFile}`, ...(spec.cgroup ? [`CGROUP=${spec.cgroup}`] : [])];
  return { argv: ["env", ...env, "sh", "-c", root, "root", LEAF, ...counts], marker, pidFile, size: spec.size };
}

/** The pids a tree has recorded so far. */
export function recordedPids(plan: TreePlan): number[] {
  try {
    return readFileSync(plan.pidFile, "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Waits until every process of the tree has started; returns their identities. */
export async function waitTreeReady(plan: TreePlan, timeoutMs = 20_000): Promise<Identity[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = recordedPids(plan);
    if (pids.length >= plan.size) {
      const identities = pids.map(identify);
      // A `sleep` pid is recorded by its parent right after fork: wait until each has become sleep
      // (for the ignorer: until its trap is set), or a signal could reach a half-started process.
      const sleeping = pids.filter((pid) => commOf(pid) === "sleep").length;
      if (identities.every((identity) => identity !== null) && sleeping === plan.size - 1 - SHELLS)
        return identities as Identity[];
    }
    if (Date.now() > deadline) throw new Error(`tree: ${pids.length} of ${plan.size} processes after ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** Starts a tree directly, in its own session like an agent under ralph, output discarded. */
export async function startTree(spec: TreeSpec): Promise<{ plan: TreePlan; child: ChildProcess; members: Identity[] }> {
  const plan = treeArgv(spec);
  const [program, ...args] = plan.argv;
  const child = spawn(program as string, args, { stdio: "ignore", detached: true });
  child.on("error", () => undefined);
  try {
    return { plan, child, members: await waitTreeReady(plan) };
  } catch (error) {
    killAll(liveCarriers(TREE_MARKER, plan.marker));
    throw error;
  }
}
