// One table of requests on runs in every state, driven through `ralph stop|pause|resume|answer` and through the
// dashboard's buttons: both accept and refuse the same requests, with the same words, and leave the same files.
import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { createDashboard } from "../../src/ui/server.js";
import { bindGuard, createGuard } from "../../src/ui/guard.js";
import { projectsOf } from "../../src/ui/projects.js";
import { readProcess } from "../../src/process/proc-table.js";
import { recordRunCreated } from "../../src/control/run-ledger.js";
import { runRalph, tempProjects } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const project = tempProjects("ralph-control-table-");
const holders: ChildProcess[] = [];
after(() => holders.forEach((child) => child.kill("SIGKILL")));

type RunState = "live" | "live-paused" | "ended" | "stale";
type Request = "pause" | "resume" | "stop" | "stop-now" | "answer";

/** A runner stand-in: alive until a STOP appears, then it records the run as ended and exits. */
const FAKE_RUNNER = `
const fs = require("node:fs"); const [dir] = process.argv.slice(1);
const timer = setInterval(() => {
  if (!fs.existsSync(dir + "/STOP")) return;
  const status = JSON.parse(fs.readFileSync(dir + "/status.json", "utf8"));
  fs.writeFileSync(dir + "/status.json", JSON.stringify({ ...status, state: "ended", exit_reason: "STOPPED", ended_at: new Date().toISOString() }));
  clearInterval(timer);
}, 10);
setTimeout(() => process.exit(0), 30000);`;

/** A project holding run `r` in `state`; a live run's runner is a stand-in process. */
async function runIn(state: RunState): Promise<{ dir: string; runDir: string }> {
  const dir = project();
  const runDir = join(dir, ".ralph", "runs", "r");
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  let pid = 999_999;
  let pidStart: string | null = "1";
  if (state === "live" || state === "live-paused") {
    const child = spawn(process.execPath, ["-e", FAKE_RUNNER, runDir], { stdio: "ignore" });
    holders.push(child);
    pid = child.pid ?? 0;
    await waitFor(() => readProcess(pid) !== null, "the stand-in runner");
    pidStart = readProcess(pid)?.startTime ?? null;
  }
  const now = new Date().toISOString();
  const ended = state === "ended";
  writeFileSync(
    join(runDir, "status.json"),
    JSON.stringify({
      run_id: "r",
      mode: "run",
      pid,
      pid_start: pidStart,
      hostname: hostname(),
      state: ended ? "ended" : "running",
      exit_reason: ended ? "DONE" : null,
      iteration: 1,
      max_iterations: 3,
      cost_usd: 0,
      started_at: now,
      updated_at: now,
      ended_at: ended ? now : null,
    }),
  );
  if (state === "live-paused") writeFileSync(join(runDir, "PAUSE"), "pause\n");
  // A runner that ended its run leaves a record naming no runner; a dead one that did not, its own.
  recordRunCreated(
    runDir,
    "r",
    null,
    ended ? null : { pid, pid_start: pidStart, hostname: hostname(), project_lock: false },
  );
  return { dir, runDir };
}

/** What a request did, seen the same way for both channels. */
interface Seen {
  ok: boolean;
  message: string;
  pause: boolean;
  stop: string | null;
  answer: boolean;
}

function filesOf(runDir: string): Pick<Seen, "pause" | "stop" | "answer"> {
  const stop = join(runDir, "STOP");
  return {
    pause: existsSync(join(runDir, "PAUSE")),
    stop: existsSync(stop) ? readFileSync(stop, "utf8").trim() : null,
    answer: existsSync(join(runDir, "ANSWER")),
  };
}

async function throughCli(state: RunState, request: Request): Promise<Seen> {
  const { dir, runDir } = await runIn(state);
  const args =
    request === "stop-now" ? ["stop", "r", "--now"] : request === "answer" ? ["answer", "r", "yes"] : [request, "r"];
  const result = await runRalph(args, dir);
  const ok = result.code === 0;
  const message = ok ? (result.stdout.split("\n")[0] ?? "") : result.stderr.replace(/^ralph: /, "").trimEnd();
  assert.ok(ok || result.code === 2, `${args.join(" ")}: exit ${String(result.code)} ${result.stderr}`);
  return { ok, message, ...filesOf(runDir) };
}

async function throughDashboard(state: RunState, request: Request): Promise<Seen> {
  const { dir, runDir } = await runIn(state);
  const guard = createGuard();
  const dashboard = createDashboard(projectsOf([dir]), guard);
  await new Promise<void>((resolve) => dashboard.server.listen(0, "127.0.0.1", resolve));
  const address = dashboard.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  bindGuard(guard, port, [`127.0.0.1:${port}`]);
  try {
    const key = projectsOf([dir])[0]?.key ?? "";
    const response = await fetch(`http://127.0.0.1:${port}/api/run/${key}/r/${request}`, {
      method: "POST",
      headers: {
        origin: `http://127.0.0.1:${port}`,
        cookie: `${guard.cookieName}=${guard.token}`,
        "x-ralph-csrf": guard.csrf,
        "content-type": "application/json",
      },
      body: JSON.stringify(request === "answer" ? { text: "yes" } : {}),
    });
    const body = (await response.json()) as { message: string };
    assert.ok(
      response.status === 200 || response.status === 409,
      `dashboard ${request}: HTTP ${response.status} ${body.message}`,
    );
    return { ok: response.status === 200, message: body.message, ...filesOf(runDir) };
  } finally {
    await dashboard.close();
  }
}

const ENDED = (what: string) => `run r has already ended (DONE); nothing to ${what}. Go on with it: ralph continue r`;
const GONE = (what: string) =>
  `run r is not running (its runner is gone); nothing to ${what}. Go on with it: ralph continue r`;

/** [run, request, accepted, the line said (CLI: its first line), PAUSE after, STOP's content after]. */
const CASES: Array<[RunState, Request, boolean, string, boolean, string | null]> = [
  [
    "live",
    "pause",
    true,
    "pause requested: run r waits before its next iteration (ralph resume r to go on)",
    true,
    null,
  ],
  ["live-paused", "pause", false, "run r is already paused (or pausing); ralph resume r to go on", true, null],
  ["live", "resume", false, "run r is not paused; nothing to resume", false, null],
  ["live-paused", "resume", true, "run r resumed", false, null],
  ["live", "stop", true, "stop requested: run r ends at the next iteration boundary", false, "stop"],
  ["live", "stop-now", true, "stop --now requested: ending run r and its agent", false, "now"],
  ["live", "answer", false, "run r is not waiting for an answer (running); nothing to answer", false, null],
  ["ended", "pause", false, ENDED("pause"), false, null],
  ["ended", "resume", false, ENDED("resume"), false, null],
  ["ended", "stop", false, ENDED("stop"), false, null],
  ["ended", "stop-now", false, ENDED("stop"), false, null],
  ["stale", "pause", false, GONE("pause"), false, null],
  ["stale", "stop", false, GONE("stop"), false, null],
  ["stale", "answer", false, "run r is not waiting for an answer (stale); nothing to answer", false, null],
];

describe("the CLI and the dashboard share one set of preconditions", () => {
  for (const [state, request, ok, message, pause, stop] of CASES) {
    test(`${request} on a ${state} run: ${ok ? "accepted" : "refused"} the same way by both`, async () => {
      const expected: Seen = { ok, message, pause, stop, answer: false };
      assert.deepEqual(await throughCli(state, request), expected, "ralph CLI");
      assert.deepEqual(await throughDashboard(state, request), expected, "dashboard");
    });
  }
});
