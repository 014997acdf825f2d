// A task list is a criterion: a task the agent marks done counts only once the run's checks pass on that
// tree. Pure facts for the judging step: which tasks an iteration marked, which checks gate them, what is open.
import { failingContext, type Criterion, type CriterionVerdict } from "../judge/criteria.js";
import { describeTask, firstIncomplete, type Task, type TaskListResult } from "../judge/tasks.js";
import type { RecordEntry } from "../run/run-record.js";
import type { Machine, Phase, Step } from "./phase.js";

/** What the gate made of an iteration's marks. */
export interface GateOutcome {
  /** The marks that did not count: they are reopened in the file. */
  reopened: Task[];
  /** The task list as it stands once they are. */
  tasks: TaskListResult | null;
  entries: RecordEntry[];
  /** For the next prompt: what was reopened and why, with the failing checks' output. */
  context: string;
}

/** Whether the iteration's marks count: only when the checks that gate them ran and passed. */
export function gateMarks(
  machine: Machine,
  phase: Phase & { id: "judging" },
  verdicts: readonly CriterionVerdict[],
): GateOutcome {
  const after = phase.tasksAfter?.ok ? phase.tasksAfter : machine.tasks;
  const gates = gatesOf(machine.plan.completionCriteria);
  const kept: GateOutcome = { reopened: [], tasks: after, entries: [], context: "" };
  if (phase.marked.length === 0 || gates.length === 0) return kept;
  const why = phase.failure
    ? `The iteration failed (${phase.failure}), so the checks did not run`
    : gatesPassed(gates, verdicts)
      ? null
      : "A check failed on that tree";
  if (why === null) return kept;
  const reopened = phase.marked;
  const file = machine.plan.tasks ?? "the task list";
  const ids = reopened.map((task) => task.id);
  const checks = failingContext([...verdicts]);
  return {
    reopened,
    tasks: withReopened(after, reopened),
    entries: [
      {
        kind: "log",
        line: `reopened in ${file}: ${reopened.map(describeTask).join("; ")} (${why.toLowerCase()}); the check output goes into the next prompt`,
      },
      { kind: "event", body: { type: "tasks_reopened", iteration: phase.attempt.iteration, tasks: ids, reason: why } },
      {
        kind: "progress",
        block: [
          ["tasks_reopened", ids.join(",")],
          ["reopen_reason", why],
        ],
      },
    ],
    context: `${reopenedContext(reopened, file, why)}${checks ? `\n\n${checks}` : ""}`,
  };
}

/** The step with the reopening done before the task list is next looked at. */
export function withReopen(step: Step, reopened: Task[]): Step {
  if (reopened.length === 0) return step;
  const effects = [...step.effects];
  const look = effects.findIndex((effect) => effect.kind === "look");
  effects.splice(look === -1 ? effects.length : look, 0, { kind: "reopenTasks", tasks: reopened });
  return { ...step, effects };
}

/** The criteria a task mark must pass: every criterion but `tasks_done`, which the marks satisfy themselves, and the reviews (which judge the finished run). */
export function gatesOf(criteria: readonly Criterion[]): Criterion[] {
  return criteria.filter((criterion) => isGate(criterion.type));
}

/** Whether a criterion of this type gates task marks. */
export function isGate(type: string): boolean {
  return type !== "tasks_done" && type !== "review";
}

/** The tasks done in `after` that were not done in `before` (matched by id in a prd.json, by text in a checklist). */
export function newlyMarked(before: TaskListResult | null, after: TaskListResult | null): Task[] {
  if (!after?.ok || !before?.ok) return [];
  const wasDone = new Set(keysOf(before.tasks).filter((_, index) => before.tasks[index]?.done));
  const keys = keysOf(after.tasks);
  return after.tasks.filter((task, index) => task.done && !wasDone.has(keys[index] as string));
}

/** A key per task that survives lines added above it: the id of a story, the text (and how many came before) of an item. */
function keysOf(tasks: readonly Task[]): string[] {
  const seen = new Map<string, number>();
  return tasks.map((task) => {
    if (task.line === undefined) return `id:${task.id}`;
    const count = seen.get(task.title) ?? 0;
    seen.set(task.title, count + 1);
    return `item:${count}:${task.title}`;
  });
}

/** Whether the gates passed: a verdict for each, all passing. */
export function gatesPassed(gates: readonly Criterion[], verdicts: readonly CriterionVerdict[]): boolean {
  const ran = verdicts.filter((verdict) => isGate(verdict.type));
  return ran.length >= gates.length && ran.every((verdict) => verdict.passed);
}

/** Whether the gates passed on this tree; null when there are none, or not every one ran. */
export function gatesVerdict(gates: readonly Criterion[], verdicts: readonly CriterionVerdict[]): boolean | null {
  const ran = verdicts.filter((verdict) => isGate(verdict.type)).length;
  return gates.length === 0 || ran < gates.length ? null : gatesPassed(gates, verdicts);
}

/** The list with `reopened` marked not done. */
export function withReopened(list: TaskListResult | null, reopened: readonly Task[]): TaskListResult | null {
  if (!list?.ok || reopened.length === 0) return list;
  const ids = new Set(reopened.map((task) => task.id));
  return { ...list, tasks: list.tasks.map((task) => (ids.has(task.id) ? { ...task, done: false } : task)) };
}

/** The tasks still open that the run must finish (with --task, only that one). */
export function openTasks(list: TaskListResult | null, onlyTask: string | null | undefined): Task[] {
  if (!list?.ok) return [];
  return list.tasks.filter((task) => !task.done && (!onlyTask || task.id === onlyTask));
}

/** The next prompt's preface when marks were reopened. */
export function reopenedContext(reopened: readonly Task[], file: string, why: string): string {
  const names = reopened.map(describeTask).join("; ");
  return `You marked ${reopened.length === 1 ? "this task" : "these tasks"} done in ${file}: ${names}. ${why}, so ${reopened.length === 1 ? "it was" : "they were"} reopened: a task counts as done only once the checks pass.`;
}

/** The log line when the promise (or passing criteria) came while tasks are open. */
export function openTasksLine(open: readonly Task[], file: string, promised: boolean): string {
  const next = firstIncomplete([...open]);
  const what = promised ? "the promise was found" : "the criteria pass";
  return `${what}, but ${open.length} task(s) in ${file} are still open; moving on to the next${next ? `: ${describeTask(next)}` : ""}`;
}
