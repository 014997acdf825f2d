// `ralph answer [RUN] TEXT` or `--file F`: answer the question a run is waiting on.
import { isRunnerAlive } from "../../control/runner-alive.js";
import { answerRun } from "../../control/answer-run.js";
import { listRuns, summariseRun } from "../../control/list-runs.js";
import { readRegular } from "../../store/regular-file.js";
import { MAX_ANSWER_BYTES } from "../../control/control-files.js";
import { forPeopleOnly } from "../for-people.js";
import { pickRun } from "../pick-run.js";
import { existsSync } from "node:fs";
import { runPaths } from "../../store/run-paths.js";
import { UsageError } from "../usage-error.js";

/** How long to wait for a live runner to take the answer before saying it will. */
const TAKE_WAIT_MS = 10_000;

/** The run meant: the one named, else the only run with an open question, else as the other commands pick. */
function pickWaiting(projectDir: string, given: string | undefined): string {
  if (given !== undefined) return pickRun(projectDir, given, "answer");
  const asking = listRuns(projectDir, isRunnerAlive, new Date()).filter(
    (run) => run.question !== null && run.state !== "foreign",
  );
  // A live run that waits is the one meant: an ended (stopped, crashed) run keeps its question for
  // `ralph continue`, but must not make the bare answer ambiguous.
  const live = asking.filter((run) => run.active);
  const waiting = live.length > 0 ? live : asking;
  if (waiting.length === 1) return (waiting[0] as { id: string }).id;
  if (waiting.length > 1)
    throw new UsageError(
      `${waiting.length} runs wait for an answer, name the one to answer: ${waiting.map((run) => run.id).join(", ")}`,
    );
  return pickRun(projectDir, undefined, "answer", true);
}

function answerFromFile(file: string): string {
  try {
    return readRegular(file, MAX_ANSWER_BYTES * 4).toString("utf8");
  } catch (error) {
    throw new UsageError(
      `--file ${file}: cannot be read (${(error as Error).message.replace(/^.*?: /, "")}); expected a text file with the answer`,
    );
  }
}

/** `ralph answer [RUN] TEXT | --file F`: writes the answer; a live run goes on at once, another at `ralph continue`. */
export async function answerCommand(
  projectDir: string,
  first: string | undefined,
  second: string | undefined,
  file: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  forPeopleOnly("answer", env);
  if (file !== undefined && second !== undefined)
    throw new UsageError("give the answer as TEXT or with --file, not both");
  // One word is the answer (the run is then picked); two are RUN and the answer.
  const given = file !== undefined || second !== undefined ? first : undefined;
  const text = file !== undefined ? answerFromFile(file) : (second ?? first);
  if (text === undefined)
    throw new UsageError("the answer is missing: ralph answer [RUN] TEXT, or ralph answer [RUN] --file F");
  const id = pickWaiting(projectDir, given);
  const outcome = answerRun(projectDir, id, text);
  if (!outcome.ok) throw new UsageError(outcome.message);
  if (!outcome.live) {
    process.stdout.write(
      `answer recorded for run ${id}; its runner is not running: ralph continue ${id} to go on with it\n`,
    );
    return 0;
  }
  const deadline = Date.now() + TAKE_WAIT_MS;
  const paths = runPaths(projectDir, id);
  for (;;) {
    const { summary, status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
    // The runner removes ANSWER once it has taken it: a fast run may take it and end before this looks.
    const taken = !existsSync(paths.answer);
    if (!summary.active && taken) {
      process.stdout.write(
        `run ${id} took the answer and has since ended (${summary.state}); see ralph status ${id}\n`,
      );
      return 0;
    }
    if (!summary.active || status?.answer || !status?.question) {
      process.stdout.write(
        summary.active
          ? `run ${id} took the answer and goes on\n`
          : `answer recorded for run ${id}, which is no longer running (${summary.state}): ralph continue ${id} to go on with it\n`,
      );
      return 0;
    }
    if (Date.now() > deadline) {
      process.stdout.write(
        `answer recorded for run ${id}; its runner takes it at its next look (check with ralph status ${id})\n`,
      );
      return 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
