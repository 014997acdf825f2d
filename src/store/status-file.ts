// status.json: the run's observed state, owned by the runner and always replaced atomically.
import type { ExitReason } from "../exit/exit-reasons.js";
import type { ResourceFigures } from "../process/agent-cgroup.js";
import { writeFileAtomic } from "./atomic-write.js";
import { readRegularText } from "./regular-file.js";

/** What the runner is doing now. */
export type RunActivity = "starting" | "running" | "paused" | "waiting" | "needs_human" | "stopping" | "ended";

/** Token totals of a run: input (without cached input), output, and the cached input read and written. */
export interface TokenTotals {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** The content of status.json. */
export interface RunStatus {
  schema_version: 1;
  run_id: string;
  mode: "run" | "hook";
  pid: number;
  pid_start: string | null;
  hostname: string;
  cwd: string;
  agent: string;
  state: RunActivity;
  iteration: number;
  max_iterations: number;
  calls: number;
  cost_usd: number;
  tokens: TokenTotals;
  session_id: string | null;
  current_task: string | null;
  started_at: string;
  updated_at: string;
  ended_at: string | null;
  exit_reason: ExitReason | null;
  exit_code: number | null;
  last_action: string;
  resume_at?: string | null;
  failures?: number;
  /** How agent trees are kept: cgroup, subreaper or tree (SPEC section 9). */
  supervision?: string;
  /** What the last iteration's agent tree used (cgroup mode), else null. */
  resources?: ResourceFigures | null;
  /** `--worktree`: the branch the run commits on (`ralph/<id>`) and its worktree directory. */
  branch?: string | null;
  worktree?: string | null;
  /** A run on a branch of its own: the commit it started from and the branch checked out then (null: detached). */
  base?: string | null;
  base_branch?: string | null;
  /** A child run of `--parallel`: its parent run's id. */
  parent?: string | null;
  /** `--dry-run`: no agent is ever started. */
  dry_run?: boolean;
  /** A `--parallel` parent: how many child runs it keeps going at once. */
  parallel?: number | null;
  /** The agent's question (`<ask>`): open while `answer` is null, else answered and not yet passed on. */
  question?: string | null;
  /** A person's answer to `question`, until the next iteration's prompt carries both. */
  answer?: string | null;
  /** The last review (`type: review` criterion): its iteration, verdict, and why it did not approve or its first finding. */
  review?: { iteration: number; verdict: "approve" | "changes" | "none"; detail: string } | null;
}

/** Replaces status.json with `status`. */
export function writeStatusFile(file: string, status: RunStatus): void {
  writeFileAtomic(file, `${JSON.stringify(status, null, 2)}\n`, 0o600, false);
}

/** Reads status.json, or null when it is missing or unreadable. */
export function readStatusFile(file: string): RunStatus | null {
  try {
    const value = JSON.parse(readRegularText(file, 1024 * 1024)) as RunStatus;
    return value && typeof value === "object" && typeof value.run_id === "string" ? value : null;
  } catch {
    return null;
  }
}
