// Answering a run's open question: what `ralph answer` and the dashboard's answer box both do.
// The answer goes into the run's ANSWER file; the live runner takes it from there (its control watcher sees
// the file), and a run whose runner is gone takes it when `ralph continue` starts it again.
import { foreignRefusal } from "./control-request.js";
import { isRunnerAlive } from "./runner-alive.js";
import { openQuestion, summariseRun } from "./list-runs.js";
import { MAX_ANSWER_BYTES, writeAnswer } from "./control-files.js";
import { runPaths } from "../store/run-paths.js";
import type { RunSummary } from "../store/run-summary.js";

/** What answering did: the answer is written (`live`: a runner will take it now), or why nothing was written. */
export type AnswerOutcome = { ok: true; live: boolean; question: string } | { ok: false; message: string };

/** Why run `summary` cannot be answered (whatever the answer), or null when it waits for one: the shared precondition. */
export function answerRefusal(summary: RunSummary): string | null {
  const id = summary.id;
  const foreign = foreignRefusal(summary, "answer");
  if (foreign) return foreign;
  if (summary.mode === "hook") return `run ${id} is an in-session loop: answer in the Claude Code session itself`;
  if (summary.question === null) return `run ${id} is not waiting for an answer (${summary.state}); nothing to answer`;
  return null;
}

/** Records `text` as the answer to run `id`'s open question; writes nothing when the run is not waiting. */
export function answerRun(projectDir: string, id: string, text: string): AnswerOutcome {
  const answer = text.trim();
  if (answer === "") return { ok: false, message: "the answer is empty" };
  const bytes = Buffer.byteLength(answer);
  if (bytes > MAX_ANSWER_BYTES)
    return { ok: false, message: `the answer is ${bytes} bytes, more than the ${MAX_ANSWER_BYTES} allowed` };
  const { summary, status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  const refusal = answerRefusal(summary);
  if (refusal) return { ok: false, message: refusal };
  const question = openQuestion(status) ?? "";
  writeAnswer(runPaths(projectDir, id), answer);
  return { ok: true, live: summary.active, question };
}
