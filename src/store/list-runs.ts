// Lists a project's runs, reading only status.json and the end of progress.txt of each.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunnerAlive } from "./lock-file.js";
import { readCompletion } from "./progress-log.js";
import { runPaths, runsDir } from "./run-paths.js";
import type { RunSummary } from "./run-summary.js";
import { isExitReason } from "../exit/exit-reasons.js";
import { readStatusFile, type RunStatus } from "./status-file.js";

/** The ids of every run of a project, oldest first. */
export function runIds(projectDir: string): string[] {
  try {
    return readdirSync(runsDir(projectDir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * The in-session loop that is still armed: the run the project's Claude Code loop file names while it
 * says `active: true`. A hook run has no runner process to check, and a closed session never says so.
 */
export function armedHookRun(projectDir: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(projectDir, ".claude", "ralph-loop.local.md"), "utf8");
  } catch {
    return null;
  }
  const frontMatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1] ?? "";
  const runId = /^run_id:[ \t]*["']?([^"'\s]+)["']?[ \t]*$/m.exec(frontMatter)?.[1];
  return runId !== undefined && /^active:[ \t]*true[ \t]*$/m.test(frontMatter) ? runId : null;
}

/** One run's summary and the status it was read from; `armed` is armedHookRun's answer when already known. */
export function summariseRun(
  projectDir: string,
  id: string,
  alive: RunnerAlive,
  now: Date,
  armed?: string | null,
): { summary: RunSummary; status: RunStatus | null } {
  const paths = runPaths(projectDir, id);
  const completion = readCompletion(paths.progress);
  const status = readStatusFile(paths.status);
  let state: RunSummary["state"];
  if (completion.ended) state = completion.reason && isExitReason(completion.reason) ? completion.reason : "FAILED";
  else if (status && status.mode === "hook") state = (armed === undefined ? armedHookRun(projectDir) : armed) === id ? "running" : "stale";
  else if (status && alive(status)) state = status.state === "paused" || status.state === "waiting" ? status.state : "running";
  else state = "stale";
  const started = status ? Date.parse(status.started_at) : Number.NaN;
  return {
    status,
    summary: {
      id,
      state,
      active: state === "running" || state === "paused" || state === "waiting",
      mode: status?.mode ?? null,
      agent: status?.agent ?? null,
      iteration: status?.iteration ?? 0,
      max_iterations: status?.max_iterations ?? null,
      cost_usd: status?.cost_usd ?? 0,
      started_at: status?.started_at ?? null,
      updated_at: status?.updated_at ?? null,
      ended_at: status?.ended_at ?? null,
      age_seconds: Number.isFinite(started) ? Math.max(0, Math.round((now.getTime() - started) / 1000)) : null,
      pid: status?.pid ?? null,
    },
  };
}

/** Every run of a project, oldest first. */
export function listRuns(projectDir: string, alive: RunnerAlive, now: Date): RunSummary[] {
  const armed = armedHookRun(projectDir);
  return runIds(projectDir).map((id) => summariseRun(projectDir, id, alive, now, armed).summary);
}
