// Where a project's runs and each run's files live.
import { join } from "node:path";
import { entryKind } from "./regular-file.js";

/** The paths of one run directory. */
export interface RunPaths {
  dir: string;
  state: string;
  status: string;
  settings: string;
  progress: string;
  events: string;
  log: string;
  lock: string;
  pause: string;
  stop: string;
  /** A person's answer to the run's open question (`ralph answer`), until the runner takes it. */
  answer: string;
  /** Where `ralph set` leaves its requests to the live runner, and the runner its answers (the runner makes it). */
  requests: string;
  iterationLog: (iteration: number) => string;
  /** The output of review `index` (from 1) of an iteration. */
  reviewLog: (iteration: number, index: number) => string;
}

/** The directory holding every run of a project. */
export function runsDir(projectDir: string): string {
  return join(projectDir, ".ralph", "runs");
}

/** The project-wide lock held by a run started without --name. */
export function projectLockPath(projectDir: string): string {
  return join(projectDir, ".ralph", "lock");
}

/** The files of run `runId` in `projectDir`. */
export function runPaths(projectDir: string, runId: string): RunPaths {
  const dir = join(runsDir(projectDir), runId);
  // `dir` is normalised by join() and each name is a plain file name: joined as text, the same path
  // without path.join's normalising pass over it for each (ralph status asked for about a hundred, enough
  // for V8 to start optimising that loop on a background thread, which Node then waits for at exit).
  const file = (name: string) => `${dir}/${name}`;
  return {
    dir,
    state: file("state.md"),
    status: file("status.json"),
    settings: file("settings.json"),
    progress: file("progress.txt"),
    events: file("events.jsonl"),
    log: file("run.log"),
    lock: file("lock"),
    pause: file("PAUSE"),
    stop: file("STOP"),
    answer: file("ANSWER"),
    requests: file("requests"),
    iterationLog: (iteration) => file(`iter-${String(iteration).padStart(3, "0")}.log`),
    reviewLog: (iteration, index) => file(`review-${String(iteration).padStart(3, "0")}-${index}.log`),
  };
}

/**
 * Why a project's run directories cannot be used, or null: `.ralph`, `.ralph/runs` and the run's own
 * directory (when `runId` is given) must each be a real directory or not exist yet; links are not followed.
 */
export function runDirProblem(projectDir: string, runId?: string): string | null {
  const chain = [
    join(projectDir, ".ralph"),
    runsDir(projectDir),
    ...(runId === undefined ? [] : [join(runsDir(projectDir), runId)]),
  ];
  for (const path of chain) {
    const kind = entryKind(path);
    if (kind === "missing") return null;
    if (kind === "link") return `${path} is a symbolic link; ralph does not follow links for its run files (remove it)`;
    if (kind !== "directory") return `${path} is not a directory (remove it)`;
  }
  return null;
}

/** A new run id, `YYYYMMDD-HHMMSS-xxxx` in UTC, so ids sort by start time. */
export function generateRunId(now: Date, random: () => number = Math.random): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const date = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  const suffix = Math.floor(random() * 0x10000)
    .toString(16)
    .padStart(4, "0");
  return `${date}-${time}-${suffix}`;
}
