// The engine's vocabulary: the phases a run goes through, the inputs that move it, and the effects it asks for.
// `step` (step.ts) is the only code that turns one into the next; the driver (drive.ts) performs the effects.
import type { AgentName, AgentOutcome, LimitInfo, TokenUsage } from "../agents/types.js";
import type { InterruptSignal } from "../exit/exit-reasons.js";
import type { ClaimVerdict } from "../judge/claim.js";
import type { Criterion, CriterionVerdict } from "../judge/criteria.js";
import type { Fingerprint } from "../judge/progress-fingerprint.js";
import type { Task, TaskListResult } from "../judge/tasks.js";
import type { Ending } from "../run/finish-run.js";
import type { RecordEntry } from "../run/run-record.js";
import type { Plan, PlanRead } from "../store/plan-file.js";
import type { AgentExit } from "../process/spawn-agent.js";
import type { ResourceFigures } from "../process/agent-cgroup.js";
import type { GateVerdict } from "../spend/spend-gate.js";

/** Why the runner ended an agent before it finished by itself. */
export type EndedBy =
  "timeout" | "idle_timeout" | "interrupted" | "stop_now" | "write_failed" | "agent_error" | "memory_cap" | "lingered";

/** What one agent process did, once it has exited and its tree is gone. */
export type AgentRun =
  | { kind: "missing"; message: string }
  | {
      kind: "finished";
      exit: AgentExit;
      outcome: AgentOutcome;
      endedBy: EndedBy | null;
      durationMs: number;
      leftovers: number;
      /** What the agent tree used, where a cgroup counted it. */
      resources?: ResourceFigures | null;
      /** With `--commit iteration`: the commit made after it (null: nothing changed). */
      commit?: CommitRecord;
      /** The end of what the agent wrote to stderr (its last 8 KiB). */
      stderrTail?: string;
    };

/** What was committed after an iteration: the commit, nothing (null), or why it could not be. */
export type CommitRecord = { sha: string; files: number } | { error: string } | null;

/** A finished agent run. */
export type FinishedRun = Extract<AgentRun, { kind: "finished" }>;

/** The iteration in flight: what it was given. */
export interface Attempt {
  iteration: number;
  /** The agent that runs it: the run's agent, or a fallback while that one waits out a usage limit. */
  agent: AgentName;
  task: string | null;
  /** The prompt's bytes, as the agent gets them on stdin. */
  prompt: Buffer;
}

/** `marked`: the tasks the iteration marked done (they count once the checks pass); `tasksAfter`: the list it left. */
export type JudgingPhase = {
  id: "judging";
  attempt: Attempt;
  run: FinishedRun;
  claim: ClaimVerdict | null;
  failure: string | null;
  marked: Task[];
  tasksAfter: TaskListResult | null;
};

/** One reviewer's answer, as the driver gives it back. */
export interface ReviewResult {
  /** The review criterion (its `check` is the reviewer's label). */
  criterion: Criterion;
  agent: AgentName;
  /** `none`: no verdict that counts (no tag, a crash, a timeout, a changed tree); `reason` says why. */
  verdict: "approve" | "changes" | "none";
  reason: string | null;
  findings: string;
  costUsd: number | null;
  tokens: TokenUsage | null;
  durationMs: number;
  /** What the run says once about this review (e.g. that without git a changed tree cannot be seen). */
  note?: string;
  /** False when no reviewer process was started (no budget left, no diff to show, it could not start): no agent call. */
  ran?: false;
}

/** The last review of a run, as status.json shows it. */
export interface LastReview {
  iteration: number;
  verdict: ReviewResult["verdict"];
  /** Why it is not an approval, or the first line of the findings. */
  detail: string;
}

/** Where a run is. Each phase carries only its own data; the counters are in the Tally. */
export type Phase =
  | { id: "boundary" }
  | { id: "paused" }
  | { id: "running"; attempt: Attempt; resultSeen: boolean }
  | JudgingPhase
  /** The other criteria would end the run DONE: the reviewers run on the judged iteration and its checks' verdicts. */
  | { id: "reviewing"; judging: JudgingPhase; checked: Input & { type: "checked" } }
  /** A usage limit's wait; with `budget`, a spent daily or weekly budget's (budget.on_exhausted: wait). */
  | { id: "waitingLimit"; iteration: number; resumeAtMs: number; budget?: string }
  /** Every task is marked done: the checks run before NO_WORK (`ending`: a signal or stop --now came meanwhile). */
  | { id: "verifying"; ending: Ending | null }
  /** The agent asked a person a question (the Tally's `question`): no iteration until it is answered. */
  | { id: "needsHuman" }
  | { id: "ending"; ending: Ending; attempt: Attempt; judged: FinishedRun | null }
  | { id: "ended"; ending: Ending };

/** The run's counters: what every phase shares and status.json reports. */
export interface Tally {
  /** The last iteration started (or the one in flight). */
  iteration: number;
  calls: number;
  costUsd: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  sessionId: string | null;
  /** Consecutive failed iterations. */
  failures: number;
  /** Consecutive iterations without progress. */
  stalled: number;
  /** The last iteration's failure and how many iterations in a row had the same one. */
  repeat: Repeat | null;
  /** Consecutive usage-limit hits (for the fallback wait when no reset time is given). */
  limitsInARow: number;
  /** Until when each agent that hit a usage limit is left out (epoch ms). */
  limitedUntil: Partial<Record<AgentName, number>>;
  /** Whether the checks that gate tasks passed on the tree the last iteration left (null: not run since). */
  gatesOk: boolean | null;
  /** Failing-check context carried into the next prompt. */
  failingChecks: string;
  /** The reviewers' findings carried into the next prompt (empty when the last review approved or none ran). */
  reviewFindings: string;
  /** The last review's verdict (null: none yet). Until one approves (once the run has worked), the run does not end NO_WORK. */
  review: LastReview | null;
  /** The git tree of the work tree when the run first started (reviews diff against it); null: none taken. */
  reviewBase: string | null;
  /** The project's progress fingerprint after the last iteration (stall detection). */
  fingerprint: Fingerprint | null;
  /** The task of the last iteration. */
  task: string | null;
  /** What the last iteration's agent tree used, where a cgroup counted it. */
  resources: ResourceFigures | null;
  /** The agent's open question (`<ask>`), kept until the next iteration's prompt carries it with its answer. */
  question: Question | null;
  /** The person's answer to `question`, once given (`ralph answer`). */
  answer: string | null;
  startedAtMs: number;
  lastAction: string;
}

/** One failure as it repeats: what it was, in words, and how many iterations in a row had it. */
export interface Repeat {
  key: string;
  what: string;
  count: number;
}

/** A question the agent asked in its final message. */
export interface Question {
  text: string;
  /** The iteration that asked it. */
  iteration: number;
}

/** The options step needs; fixed for the whole run. */
export interface EngineConfig {
  maxFailures: number;
  stallLimit: number;
  /** The same failure this many iterations in a row ends the run FAILED (0: never). */
  sameFailureLimit: number;
  /** A billing error ends the run (fail) or is waited out like a usage limit (wait). */
  onBillingError: "fail" | "wait";
  onLimit: "wait" | "stop";
  /** What an `<ask>` does: wait for a person, or only log the question and go on. */
  onAsk: "wait" | "continue";
  maxRuntimeMs: number | null;
  maxCostUsd: number | null;
  dryRun: boolean;
  /** The run's agent, then its fallbacks in order. */
  agents: readonly AgentName[];
  /** A usage limit resetting further away than this moves on to the next agent instead of waiting. */
  maxWaitMs: number;
  /** `--task`: the one task (by id) this run works on, else null for the first incomplete one. */
  onlyTask?: string | null;
  /** `--task-index`: the task was picked by its position, so one already done before any iteration is NO_WORK, not DONE. */
  onlyTaskByIndex?: boolean;
}

/** Everything step reads and returns. */
export interface Machine {
  phase: Phase;
  tally: Tally;
  /** The latest good state.md. */
  plan: Plan;
  /** The last state.md problem logged, so a broken file is reported once. */
  planProblem: string | null;
  /** Notes already logged that a run says once, not every iteration (e.g. "stall detection needs git"). */
  toldOnce: readonly string[];
  /** The task list state.md names, as last read (null without one). */
  tasks: TaskListResult | null;
  config: EngineConfig;
}

/** What happens to the engine. Events, by contrast, are what the run publishes (events.jsonl). */
export type Input =
  | { type: "signal"; signal: InterruptSignal }
  /** A run file could not be written (a full disk): the run ends FAILED, as after a signal. */
  | { type: "recordFailed"; message: string }
  /** state.md re-read; `tasks` is the task list it names, when that was read too. */
  | { type: "desired"; read: PlanRead; tasks?: TaskListResult | null }
  /** The control files; `answer` is the ANSWER file's text when one is there. */
  | {
      type: "sentinel";
      stop: boolean;
      stopNow: boolean;
      pause: boolean;
      answer?: string | null;
      nowMs: number;
      budget?: GateVerdict;
    }
  | { type: "control" }
  | { type: "tick"; nowMs: number }
  | { type: "agentResult" }
  /** `tasks`: the task list as the agent left it (null without one). */
  | { type: "agentExited"; run: AgentRun; tasks?: TaskListResult | null }
  | { type: "limitHit"; run: FinishedRun; limit: LimitInfo; nowMs: number }
  | { type: "checked"; verdicts: CriterionVerdict[]; fingerprint: Fingerprint | null }
  | { type: "reviewed"; reviews: ReviewResult[] };

/** What step asks the driver to do, in order. */
export type Effect =
  | { kind: "record"; entries: RecordEntry[] }
  /** Read the sentinels; with "control" state.md too; with "all" also the task list state.md names. */
  | { kind: "look"; what: "sentinels" | "control" | "all" }
  | { kind: "spawn"; attempt: Attempt }
  | { kind: "endTree"; why: EndedBy }
  | { kind: "runChecks"; iteration: number; criteria: Criterion[]; fingerprint: boolean }
  /** Run the reviewers on the run's diff; `task` is the prompt the agent was given. */
  | { kind: "review"; iteration: number; task: string; criteria: Criterion[] }
  | { kind: "sleep"; untilMs: number }
  /** Mark these tasks not done again in the task list: the checks failed on the tree that marked them. */
  | { kind: "reopenTasks"; tasks: Task[] }
  /** Remove the ANSWER file: its answer is in the machine now (or the iteration that carries it has started). */
  | { kind: "clearAnswer" };

/** The result of one step. */
export interface Step {
  machine: Machine;
  effects: Effect[];
}
