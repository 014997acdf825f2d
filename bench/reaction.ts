// Reaction time: STOP, PAUSE or `active: false` written during an iteration → the runner acting on it once
// the agent exits (against the runner simply starting its next iteration); `stop --now` → agent tree gone.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { identify, stillLive, waitAllGone, killAll, type Identity } from "./proc-watch.js";
import {
  builds,
  cleanEnv,
  eventTime,
  fixture,
  readEvents,
  runDir,
  scratchDir,
  startNode,
  startRalph,
  RALPH,
  type Started,
} from "./ralph-cli.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples, sleep, wallMs } from "./stats.js";

type Request = "stop" | "pause" | "inactive";
const TARGET_MS = 100;
const NOW_TARGET_MS = 300;
const CHILDREN = 20;
const CLEANUP_MS = 50;

async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`reaction: no ${what} within ${timeoutMs} ms`);
    await sleep(2);
  }
}

function wallFrom(file: string): number {
  return Number(readFileSync(file, "utf8"));
}

/**
 * One run of build `main`: iteration 1 ends normally (the baseline), the request is written during iteration
 * 2. `sandbox`: its mode, when not the suites' own (off, see cleanEnv).
 */
async function react(
  request: Request,
  project: string,
  id: string,
  main: string,
  sandbox?: string,
): Promise<{ next: number; acted: number; exited: number }> {
  const gates = join(project, `gates-${id}`);
  mkdirSync(gates);
  const run = runDir(project, id);
  const ralph = startNode(
    [main, "run", "--name", id, "-n", "5", "reaction", "--", process.execPath, fixture("gate-agent"), gates],
    project,
    sandbox === undefined ? cleanEnv() : cleanEnv({ RALPH_SANDBOX: sandbox }),
  );
  try {
    return await drive(request, ralph, gates, run);
  } catch (error) {
    // ralph's guardian ends the agent once ralph is gone.
    ralph.child.kill("SIGKILL");
    throw error;
  }
}

async function drive(
  request: Request,
  ralph: Started,
  gates: string,
  run: string,
): Promise<{ next: number; acted: number; exited: number }> {
  await waitFor("first iteration", () => existsSync(join(gates, "started-1")));
  writeFileSync(join(gates, "go-1"), "");
  await waitFor("second iteration", () => existsSync(join(gates, "started-2")));
  if (request === "stop") writeFileSync(join(run, "STOP"), "stop\n");
  if (request === "pause") writeFileSync(join(run, "PAUSE"), "pause\n");
  if (request === "inactive") {
    const state = join(run, "state.md");
    writeFileSync(state, readFileSync(state, "utf8").replace(/^active: true$/m, "active: false"));
  }
  // Let the runner's watcher see the request before the iteration ends, as it would in real use.
  await sleep(20);
  writeFileSync(join(gates, "go-2"), "");
  if (request === "pause") {
    await waitFor("paused event", () => readEvents(run).some((event) => event.type === "paused"));
    writeFileSync(join(run, "STOP"), "stop\n");
  }
  const exit = await ralph.exited;
  if (exit.code !== 0)
    throw new Error(`reaction ${request}: ralph exit ${exit.code ?? exit.signal} (expected 0, STOPPED)`);
  const events = readEvents(run);
  const exit1 = wallFrom(join(gates, "exit-1"));
  const exit2 = wallFrom(join(gates, "exit-2"));
  const second = eventTime(events, (event) => event.type === "iteration_started" && event.iteration === 2);
  const acted = eventTime(events, (event) => event.type === (request === "pause" ? "paused" : "run_ended"));
  if (second === null || acted === null) throw new Error(`reaction ${request}: events missing in ${run}`);
  const exitedWall = performance.timeOrigin + exit.at;
  return { next: second - exit1, acted: acted - exit2, exited: exitedWall - exit2 };
}

async function startCoop(dir: string): Promise<{ members: Identity[]; root: number }> {
  await waitFor("cooperative tree", () => existsSync(join(dir, "ready")));
  const ready = JSON.parse(readFileSync(join(dir, "ready"), "utf8")) as { root: number; children: number[] };
  const members = [ready.root, ...ready.children].map(identify);
  if (members.some((member) => member === null)) throw new Error("cooperative tree: a member is already gone");
  return { members: members as Identity[], root: ready.root };
}

/** `ralph stop --now` → every process of a cooperative tree gone; whether it could finish its cleanup. */
async function stopNow(project: string, id: string): Promise<{ total: number; afterStopFile: number; clean: boolean }> {
  const gates = join(project, `now-${id}`);
  mkdirSync(gates);
  const ralph = startRalph(
    [
      "run",
      "--name",
      id,
      "-n",
      "1",
      "stop-now",
      "--",
      process.execPath,
      fixture("coop-agent"),
      gates,
      String(CHILDREN),
      String(CLEANUP_MS),
    ],
    project,
  );
  let members: Identity[];
  try {
    members = (await startCoop(gates)).members;
  } catch (error) {
    ralph.child.kill("SIGKILL");
    throw error;
  }
  const startedWall = wallMs();
  const started = nowMs();
  const cli = startRalph(["stop", "--now", id], project);
  const gone = await waitAllGone(members, 30_000);
  const total = (gone ?? nowMs()) - started;
  killAll(stillLive(members));
  const stopped = await cli.exited;
  const ran = await ralph.exited;
  if (stopped.code !== 0 || ran.code !== 0 || gone === null) {
    throw new Error(
      `stop --now: stop exit ${stopped.code ?? stopped.signal} ${stopped.stderr}; run exit ${ran.code ?? ran.signal} ${ran.stderr}; tree ${gone === null ? "still there" : "gone"}`,
    );
  }
  const stopWritten = statSync(join(runDir(project, id), "STOP")).mtimeMs;
  return { total, afterStopFile: total - (stopWritten - startedWall), clean: existsSync(join(gates, "clean-exit")) };
}

/** The same tree TERMed directly, pid by pid: how long it takes to end by itself. */
async function directTerm(project: string, round: number): Promise<number> {
  const gates = join(project, `direct-${round}`);
  mkdirSync(gates);
  const agent = startNode([fixture("coop-agent"), gates, String(CHILDREN), String(CLEANUP_MS)], project);
  let members: Identity[];
  try {
    members = (await startCoop(gates)).members;
  } catch (error) {
    agent.child.kill("SIGKILL");
    throw error;
  }
  const started = nowMs();
  for (const member of members) process.kill(member.pid, "SIGTERM");
  const gone = await waitAllGone(members, 10_000);
  killAll(stillLive(members));
  await agent.exited;
  return (gone ?? nowMs()) - started;
}

/** Measures each request `runs` times. */
export async function benchReaction(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("reaction");
  const samples = new Samples();
  let clean = 0;
  let attempt = 0;
  for (let round = 0; round < runs; round++) {
    // BENCH_BEFORE: an earlier build's reactions too, alternating with this one's in each round.
    const order = round % 2 === 0 ? builds() : builds().reverse();
    for (const { label, main } of order) {
      for (const request of ["stop", "pause", "inactive"] as const) {
        const result = await retryOnce(
          `reaction ${request}${label}`,
          () => react(request, project, `${request}-${++attempt}`, main),
          log,
        );
        samples.add(`next${label}`, result.next);
        samples.add(`${request}${label}`, result.acted);
        if (request !== "pause") samples.add(`${request}${label}.exit`, result.exited);
      }
    }
    // This build's STOP with the sandbox at its default (auto): what each iteration's bubblewrap adds to it.
    const boxed = await retryOnce(
      "reaction stop (sandbox auto)",
      () => react("stop", project, `stop-${++attempt}`, RALPH, "auto"),
      log,
    );
    samples.add("next.boxed", boxed.next);
    samples.add("stop.boxed", boxed.acted);
    samples.add("stop.boxed.exit", boxed.exited);
    const now = await retryOnce("stop --now", () => stopNow(project, `now-${++attempt}`), log);
    samples.add("now", now.total);
    samples.add("now.afterFile", now.afterStopFile);
    if (now.clean) clean++;
    samples.add("direct", await retryOnce("direct TERM", () => directTerm(project, ++attempt), log));
    log(`reaction: round ${round + 1}/${runs}`);
  }
  const group = "Reaction time";
  const rows: Row[] = [];
  const requests: Array<[Request, string, string]> = [
    ["stop", "STOP file → run_ended", "touch .ralph/runs/<id>/STOP"],
    ["pause", "PAUSE file → paused", "touch .ralph/runs/<id>/PAUSE"],
    [
      "inactive",
      "state.md active: false → run_ended",
      "sed -i 's/^active: true/active: false/' .ralph/runs/<id>/state.md",
    ],
  ];
  for (const { label } of builds())
    for (const [request, figure, command] of requests) {
      const next = samples.get(`next${label}`);
      const value = samples.get(`${request}${label}`);
      const exited = samples.get(`${request}${label}.exit`);
      rows.push({
        group,
        figure: `${figure}, after the agent's exit${label}`,
        unit: "ms",
        value,
        ...(next ? { baseline: { label: "agent exit → next iteration", value: next } } : {}),
        target: `< ${TARGET_MS} ms`,
        met: value ? value.median < TARGET_MS : null,
        ...(exited
          ? {
              note: `ralph process gone after ${exited.median.toFixed(0)} ms (${exited.min.toFixed(0)}–${exited.max.toFixed(0)})`,
            }
          : {}),
        command: `${command} while an iteration runs`,
      });
    }
  const [boxedNext, boxed, boxedExit] = [
    samples.get("next.boxed"),
    samples.get("stop.boxed"),
    samples.get("stop.boxed.exit"),
  ];
  rows.push({
    group,
    figure: "STOP file → run_ended, after the agent's exit, sandbox: auto (the default)",
    unit: "ms",
    value: boxed,
    ...(boxedNext ? { baseline: { label: "agent exit → next iteration", value: boxedNext } } : {}),
    target: `< ${TARGET_MS} ms`,
    met: boxed ? boxed.median < TARGET_MS : null,
    ...(boxedExit
      ? {
          note: `ralph process gone after ${boxedExit.median.toFixed(0)} ms (${boxedExit.min.toFixed(0)}–${boxedExit.max.toFixed(0)}); bubblewrap where it works`,
        }
      : {}),
    command: "touch .ralph/runs/<id>/STOP while an iteration runs (RALPH_SANDBOX=auto)",
  });
  const now = samples.get("now");
  const afterFile = samples.get("now.afterFile");
  const direct = samples.get("direct");
  rows.push({
    group,
    figure: `stop --now → agent tree gone (${CHILDREN + 1} processes)`,
    unit: "ms",
    value: now,
    ...(direct ? { baseline: { label: "tree TERMed directly", value: direct } } : {}),
    target: `< ${NOW_TARGET_MS} ms, grace honoured`,
    met: now ? now.median < NOW_TARGET_MS && clean === runs : null,
    note: `grace honoured (clean exit) in ${clean}/${runs}; ${afterFile ? `${afterFile.median.toFixed(0)} ms (${afterFile.min.toFixed(0)}–${afterFile.max.toFixed(0)}) after STOP was written` : ""}`,
    command: "ralph stop --now <id>",
  });
  return rows;
}
