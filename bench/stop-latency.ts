// Stop latency: a signal to ralph → ralph gone and every process of a 200-process agent tree gone,
// against the naive single-pid kill, npm's tree-kill, a per-pid SIGKILL loop and cgroup.kill.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import treeKill from "tree-kill";
import { cgroupPopulated, createCgroup, killCgroup, removeCgroup } from "./cgroup.js";
import { descendants, killAll, liveCarriers, stillLive, waitAllGone, type Identity } from "./proc-watch.js";
import { cleanEnv, eventTime, readEvents, runDir, scratchDir, startRalph } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples, sleep } from "./stats.js";
import { stopRows } from "./stop-rows.js";
import { startTree, TREE_MARKER, treeArgv, waitTreeReady, type TreePlan, type TreeSpec } from "./tree.js";

const SIZE = 200;
const GRACE_MS = 1000;
/** How long a baseline gets to finish the job before what is left counts as surviving. */
const SETTLE_MS = 500;

type Outcome = { ms: number; survivors: number };

/** The supervision modes ralph is measured in (cgroup only where a cgroup can be made). */
type SupervisionMode = "cgroup" | "subreaper";

/** Everything of the tree that still runs, by recorded identity and by marker; SIGKILLs it. */
function survivorsOf(plan: TreePlan, members: Identity[]): number {
  const live = new Map<string, Identity>();
  for (const identity of [...stillLive(members), ...liveCarriers(TREE_MARKER, plan.marker)])
    live.set(`${identity.pid}:${identity.start}`, identity);
  killAll([...live.values()]);
  return live.size;
}

/**
 * ralph's outcome. `ms` is what the person who stopped it waits for: ralph exited (the prompt is back)
 * and, with it, every process of the agent tree gone. Also when each happened, when run_ended was
 * written, and when everything under ralph at the signal (its guardian too) was gone.
 */
type RalphOutcome = Outcome & { reason: string; treeMs: number; endedMs: number; exitMs: number; allMs: number };

async function viaRalph(
  spec: TreeSpec,
  project: string,
  id: string,
  graceMs: number,
  mode: SupervisionMode,
): Promise<RalphOutcome> {
  const plan = treeArgv(spec);
  const ralph = startRalph(
    ["run", "--name", id, "-n", "1", "--grace", `${graceMs}ms`, "stop-latency", "--", ...plan.argv],
    project,
    { env: cleanEnv({ RALPH_SUPERVISION: mode }) },
  );
  let members: Identity[];
  try {
    members = await waitTreeReady(plan);
  } catch (error) {
    ralph.child.kill("SIGKILL");
    killAll(liveCarriers(TREE_MARKER, plan.marker));
    throw new Error(`${(error as Error).message}; ralph: ${(await ralph.exited).stderr}`, { cause: error });
  }
  // Everything under ralph: the agent tree and ralph's guardian (which leaves by itself once told the run ended).
  const everything = descendants(ralph.child.pid as number);
  const started = nowMs();
  process.kill(ralph.child.pid as number, "SIGTERM");
  const [exit, treeGone, gone] = await Promise.all([
    ralph.exited,
    waitAllGone(members, graceMs + 10_000),
    waitAllGone(everything, graceMs + 10_000),
  ]);
  const ms = Math.max(exit.at, treeGone ?? nowMs()) - started;
  const progress = readFileSync(join(runDir(project, id), "progress.txt"), "utf8");
  const reason = /completion_reason=(\w+)\npromise=COMPLETE\n$/.exec(progress)?.[1] ?? "no marker";
  const survivors = survivorsOf(plan, members);
  // When ralph wrote run_ended (its own clock, whole milliseconds), relative to the signal.
  const ended = eventTime(readEvents(runDir(project, id)), (event) => event.type === "run_ended");
  const endedMs = ended === null ? Number.NaN : ended - (performance.timeOrigin + started);
  return {
    ms,
    survivors,
    reason: `${reason}, ${exit.signal ?? exit.code}`,
    treeMs: (treeGone ?? nowMs()) - started,
    endedMs,
    exitMs: exit.at - started,
    allMs: Math.max(exit.at, gone ?? nowMs()) - started,
  };
}

async function naiveKill(spec: TreeSpec): Promise<Outcome> {
  const { plan, child, members } = await startTree(spec);
  const root = members.filter((member) => member.pid === child.pid);
  const started = nowMs();
  process.kill(child.pid as number, "SIGTERM");
  const gone = await waitAllGone(root, 5000);
  const ms = (gone ?? nowMs()) - started;
  await sleep(SETTLE_MS);
  return { ms, survivors: survivorsOf(plan, members) };
}

async function withTreeKill(spec: TreeSpec): Promise<Outcome> {
  const { plan, child, members } = await startTree(spec);
  const started = nowMs();
  await new Promise<void>((resolve) => treeKill(child.pid as number, "SIGTERM", () => resolve()));
  const called = nowMs();
  const gone = await waitAllGone(members, SETTLE_MS);
  return { ms: (gone ?? called) - started, survivors: survivorsOf(plan, members) };
}

async function perPidKill(spec: TreeSpec): Promise<Outcome> {
  const { plan, child, members } = await startTree(spec);
  const started = nowMs();
  const root = child.pid as number;
  for (const pid of [root, ...descendants(root).map((identity) => identity.pid)]) process.kill(pid, "SIGKILL");
  const gone = await waitAllGone(members, 5000);
  return { ms: (gone ?? nowMs()) - started, survivors: survivorsOf(plan, members) };
}

async function cgroupKill(spec: TreeSpec, cgroup: string): Promise<Outcome> {
  const { plan, members } = await startTree({ ...spec, cgroup });
  const started = nowMs();
  killCgroup(cgroup);
  const gone = await waitAllGone(members, 5000);
  const outcome = { ms: (gone ?? nowMs()) - started, survivors: survivorsOf(plan, members) };
  return outcome;
}

/** Measures both trees `runs` times, every approach once per round so they share the machine's mood. */
export async function benchStopLatency(runs: number, log: (line: string) => void): Promise<Row[]> {
  const dir = scratchDir("stop");
  const samples = new Samples();
  const reasons = new Set<string>();
  const probe = createCgroup();
  if (probe.dir !== null) removeCgroup(probe.dir);
  let counter = 0;
  const modes: SupervisionMode[] = probe.dir !== null ? ["cgroup", "subreaper"] : ["subreaper"];
  for (let round = 0; round < runs; round++) {
    for (const ignorer of [false, true]) {
      const kind = ignorer ? "ignorer" : "honour";
      const spec: TreeSpec = { size: SIZE, ignorer, dir };
      const approaches: Array<[string, () => Promise<Outcome>]> = [];
      for (const mode of modes) {
        const ralph = await retryOnce(
          `stop latency (${mode})`,
          () => viaRalph(spec, dir, `stop-${++counter}`, ignorer ? GRACE_MS : 5000, mode),
          log,
        );
        reasons.add(ralph.reason);
        samples.add(`${kind}.ralph-${mode}.tree`, ralph.treeMs);
        samples.add(`${kind}.ralph-${mode}.exit`, ralph.exitMs);
        samples.add(`${kind}.ralph-${mode}.all`, ralph.allMs);
        if (Number.isFinite(ralph.endedMs)) samples.add(`${kind}.ralph-${mode}.ended`, ralph.endedMs);
        approaches.push([`ralph-${mode}`, async () => ralph]);
      }
      approaches.push(
        ["naive", () => naiveKill(spec)],
        ["treekill", () => withTreeKill(spec)],
        ["perpid", () => perPidKill(spec)],
      );
      if (probe.dir !== null) {
        approaches.push([
          "cgroup",
          async () => {
            const made = createCgroup();
            if (made.dir === null) throw new Error(`cgroup: ${made.why}`);
            try {
              return await cgroupKill(spec, made.dir);
            } finally {
              const deadline = Date.now() + 2000;
              while (cgroupPopulated(made.dir) && Date.now() < deadline) await sleep(5);
              removeCgroup(made.dir);
            }
          },
        ]);
      }
      for (const [name, measure] of approaches) {
        const outcome = await retryOnce(`stop latency ${name}`, measure, log);
        samples.add(`${kind}.${name}.ms`, outcome.ms);
        samples.add(`${kind}.${name}.survivors`, outcome.survivors);
      }
    }
    log(`stop latency: round ${round + 1}/${runs}`);
  }
  return stopRows(samples, {
    size: SIZE,
    graceMs: GRACE_MS,
    noCgroup: probe.dir === null ? probe.why : null,
    reasons: [...reasons].join("; "),
    modes,
  });
}
