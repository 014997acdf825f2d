// Finding a writable cgroup v2 hierarchy and making the runner's own parent cgroup in it, with the
// memory and pids controllers enabled below it where they exist (or their v1 hierarchies on a hybrid host).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cgroupMounts, ownCgroups, pathUnder, readText, writeControl, type CgroupMount } from "./cgroup-fs.js";
import { CgroupTree } from "./cgroup-tree.js";

/** The controllers whose figures and caps ralph uses. */
export type ControllerName = "memory" | "pids";

/** Where a controller's files for the agent cgroups are: the v2 cgroup itself, a v1 companion, or nowhere. */
export type ControllerSource =
  { kind: "v2" } | { kind: "v1"; mount: string; why: string } | { kind: "none"; why: string };

/** The runner's parent cgroup: every agent cgroup of this runner is made under it. */
export interface RunnerCgroup {
  tree: CgroupTree;
  /** The directory it was made in. */
  base: string;
  /** Whether cgroup.kill exists (else freeze + SIGKILL). */
  hasKill: boolean;
  /** Per runner directory (v2, then each v1 companion): the runner's own cgroup in that hierarchy. */
  homes: Map<string, string>;
  controllers: Record<ControllerName, ControllerSource>;
}

/** The outcome of setting up: the runner cgroup, or every path tried and why it failed. */
export type CgroupSetup = { ok: true; runner: RunnerCgroup; tried: string[] } | { ok: false; tried: string[] };

const CONTROLLERS: ControllerName[] = ["memory", "pids"];

/** Candidate directories of the v2 hierarchy: our own cgroup first (a delegated subtree), then the mount's top. */
function v2Candidates(mounts: CgroupMount[], own: Map<string, string>): string[] {
  const candidates: string[] = [];
  for (const mount of mounts.filter((entry) => entry.version === 2)) {
    const mine = pathUnder(mount, own.get("") ?? "/");
    if (mine !== null) candidates.push(mine);
    candidates.push(mount.mountPoint);
  }
  return [...new Set(candidates.map((dir) => (dir.length > 1 ? dir.replace(/\/+$/, "") : dir)))];
}

function listed(dir: string, file: string): string[] {
  return (readText(join(dir, file)) ?? "")
    .trim()
    .split(/\s+/)
    .filter((name) => name !== "");
}

/** Makes a controller available below `parent` (v2), or finds its v1 hierarchy; says why not otherwise. */
function controllerSource(
  name: ControllerName,
  base: string,
  parent: string,
  mounts: CgroupMount[],
  own: Map<string, string>,
  runnerName: string,
  homes: Map<string, string>,
): ControllerSource {
  if (!listed(parent, "cgroup.controllers").includes(name)) {
    // Enabling it in the base fails when the base holds processes and is not the root ("no internal processes").
    const error = listed(base, "cgroup.controllers").includes(name)
      ? writeControl(base, "cgroup.subtree_control", `+${name}`)
      : "not in this hierarchy";
    const why = `cgroup v2 ${name} controller unavailable in ${base} (${error ?? "not delegated"})`;
    if (!listed(parent, "cgroup.controllers").includes(name)) {
      const v1 = mounts.find((mount) => mount.version === 1 && mount.controllers.includes(name));
      const v1Own = v1 ? pathUnder(v1, own.get(name) ?? "/") : null;
      if (v1 && v1Own !== null) {
        const dir = join(v1Own, runnerName);
        homes.set(dir, v1Own);
        return { kind: "v1", mount: dir, why };
      }
      return { kind: "none", why };
    }
  }
  const error = writeControl(parent, "cgroup.subtree_control", `+${name}`);
  return error === null
    ? { kind: "v2" }
    : { kind: "none", why: `cannot enable the ${name} controller in ${parent} (${error})` };
}

/** Makes the runner's parent cgroup `name` in the first writable v2 directory found. */
export function setUpRunnerCgroup(name: string): CgroupSetup {
  if (process.platform !== "linux") return { ok: false, tried: ["cgroups exist only on Linux"] };
  const mounts = cgroupMounts();
  const own = ownCgroups();
  const candidates = v2Candidates(mounts, own);
  const v2Mount = mounts.find((mount) => mount.version === 2);
  const v2Home = v2Mount ? pathUnder(v2Mount, own.get("") ?? "/") : null;
  if (candidates.length === 0) return { ok: false, tried: ["no cgroup v2 hierarchy mounted (/proc/self/mountinfo)"] };
  const tried: string[] = [];
  for (const base of candidates) {
    const v2 = new CgroupTree(join(base, name));
    const failed = v2.create();
    if (failed !== null) {
      tried.push(failed);
      continue;
    }
    tried.push(`${v2.dir}: ok`);
    // The runner steps into each agent cgroup to fork the agent and back out, so it must know its own.
    const homes = new Map<string, string>([[v2.dir, v2Home ?? base]]);
    const controllers = {} as Record<ControllerName, ControllerSource>;
    for (const controller of CONTROLLERS)
      controllers[controller] = controllerSource(controller, base, v2.dir, mounts, own, name, homes);
    const tree = new CgroupTree(v2.dir, []);
    for (const controller of CONTROLLERS) {
      const source = controllers[controller];
      if (source.kind !== "v1") continue;
      const failure = new CgroupTree(source.mount).create();
      if (failure === null) tree.companions.push(source.mount);
      else
        controllers[controller] = { kind: "none", why: `cgroup v1 ${controller} hierarchy not writable (${failure})` };
    }
    return {
      ok: true,
      runner: { tree, base, hasKill: existsSync(join(v2.dir, "cgroup.kill")), controllers, homes },
      tried,
    };
  }
  return { ok: false, tried };
}
