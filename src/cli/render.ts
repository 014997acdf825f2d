// All user-facing wording of a run: iteration headers, the live status line on a TTY, agent output with
// --live, each decision with its reason, and the closing summary with the next step.
import pc from "picocolors";
import type { RunResult } from "../run/finish-run.js";
import type { RecordListener } from "../run/run-record.js";
import type { RunEvent } from "../store/event-log.js";
import { isExitReason } from "../exit/exit-reasons.js";
import { visible } from "../view/visible-text.js";
import { nextStep } from "./next-step.js";
import { costText, tokensText, type SpendTotals } from "../spend/spend-totals.js";
import {
  checksSkippedLine,
  criterionLine,
  iterationHeader,
  iterationLine,
  liveLine,
  promiseIgnoredLine,
  reviewLine,
  statusLine,
  stderrTailLine,
  tokensOf,
} from "./render-lines.js";

/** How a run is shown on the terminal. */
export interface RenderMode {
  json: boolean;
  live: boolean;
  maxIterations: number;
  /** Draw the updating status line (default: whether `out` is a terminal). */
  tty?: boolean;
  /** Print the ending from the run_ended event (for `ralph logs`; a live run prints summaryLines instead). */
  showEnding?: boolean;
}

/** A renderer: the record listener plus what the closing summary needs to know. */
export interface Renderer extends RecordListener {
  /** Whether any iteration reported a cost (agents like `command` report none). */
  readonly costReported: boolean;
  /** Stops the status line's clock and clears the line. */
  close(): void;
}

interface Running {
  iteration: unknown;
  startedAt: number;
  tokens: number | null;
  tool: string | null;
  retries: number;
  apiErrors: number;
  thinks: boolean;
}

/** A listener that prints a run's progress to `out` in the chosen mode. */
export function createRenderer(mode: RenderMode, out: NodeJS.WritableStream = process.stdout): Renderer {
  const tty = mode.tty ?? (out as { isTTY?: boolean }).isTTY === true;
  let maxIterations = mode.maxIterations;
  let spend = 0;
  let costReported = false;
  let running: Running | null = null;
  let criteria: string[] = [];
  let lastIteration = 0;
  let shown = false;
  let clock: NodeJS.Timeout | null = null;
  // A reader that goes away (`ralph run … | head`) must not take the run with it: the run's files are
  // its record, the terminal only a view of it.
  let closed = false;
  out.on("error", () => {
    closed = true;
  });
  const write = (text: string) => {
    if (!closed) out.write(text);
  };
  const clear = () => {
    if (shown) write("\r\x1b[2K");
    shown = false;
  };
  const draw = () => {
    if (!tty || !running) return;
    const columns = (out as { columns?: number }).columns ?? 80;
    const line = statusLine(
      { ...running, maxIterations, elapsedMs: Date.now() - running.startedAt, spend: costReported ? spend : null },
      columns - 1,
    );
    write(`\r\x1b[2K${pc.dim(visible(line))}`);
    shown = true;
  };
  const print = (line: string) => {
    clear();
    write(`${line}\n`);
    draw();
  };
  const stopClock = () => {
    if (clock) clearInterval(clock);
    clock = null;
  };

  function onAgentEvent(event: RunEvent): void {
    if (running) {
      running.tokens = tokensOf(event.tokens) ?? running.tokens;
      if (event.kind === "tool_use")
        running.tool = `${String(event.tool ?? "tool")}${typeof event.text === "string" && event.text ? ` ${event.text}` : ""}`;
      if (event.kind === "text" || event.kind === "result") running.tool = null;
      if (event.kind === "retry") running.retries += 1;
      if (event.kind === "error") running.apiErrors += 1;
    }
    // Retries and errors are news even without --live: a retry storm must show as it happens.
    // (Made only when shown: every output line of the agent passes here.)
    const line = mode.live || event.kind === "retry" || event.kind === "error" ? liveLine(event) : null;
    if (line !== null) print(line);
    else draw();
  }

  return {
    get costReported() {
      return costReported;
    },
    close() {
      stopClock();
      clear();
    },
    event(event: RunEvent) {
      if (mode.json) return write(`${JSON.stringify(event)}\n`);
      // The cap may change mid-run (state.md): every iteration says which one it ran under.
      if (
        (event.type === "run_started" || event.type === "iteration_started") &&
        typeof event.max_iterations === "number"
      ) {
        maxIterations = event.max_iterations;
      }
      switch (event.type) {
        case "iteration_started":
          criteria = [];
          // A command agent (a script) does not think: its line shows only what is known of it.
          running = {
            iteration: event.iteration,
            startedAt: Date.parse(event.ts) || Date.now(),
            tokens: null,
            tool: null,
            retries: 0,
            apiErrors: 0,
            thinks: event.agent !== "command",
          };
          print(iterationHeader(event, maxIterations));
          if (tty && !clock) clock = setInterval(draw, 1000).unref();
          return;
        case "agent_event":
          return onAgentEvent(event);
        case "criteria_checked":
          // Shown after the iteration's own line, which is only known once the iteration is recorded; a review by its review_verdict.
          if (event.criterion !== "review") criteria.push(criterionLine(event));
          return;
        case "review_verdict":
          criteria.push(reviewLine(event));
          return;
        case "iteration_ended": {
          running = null;
          stopClock();
          if (typeof event.iteration === "number" && event.counted !== false) lastIteration = event.iteration;
          if (typeof event.cost_usd === "number") costReported = true;
          spend = typeof event.cost_total_usd === "number" ? event.cost_total_usd : spend;
          print(iterationLine(event, maxIterations, costReported ? spend : null));
          const why = stderrTailLine(event);
          if (why) print(why);
          for (const line of criteria.splice(0)) print(line);
          for (const line of [promiseIgnoredLine(event), checksSkippedLine(event)]) if (line) print(line);
          return;
        }
        case "paused":
          return print(
            pc.yellow(`paused: the run waits before its next iteration; go on with ralph resume ${event.run}`),
          );
        case "needs_human":
          print(pc.yellow(`the agent asks: ${visible(String(event.question))}`));
          return print(pc.yellow(`waiting for your answer: ralph answer ${event.run} "YOUR ANSWER" (or --file F)`));
        case "run_ended":
          stopClock();
          clear();
          if (mode.showEnding) for (const line of endingLines(event, lastIteration, maxIterations)) print(line);
          return;
        default:
          return;
      }
    },
    log(line: string) {
      if (mode.json) return;
      // The ending is in the summary; check verdicts come from their events, after the iteration line.
      if (
        line.startsWith("===") ||
        line.startsWith("run ended:") ||
        /^(check (passed|FAILED)|review by .*?):/.test(line)
      )
        return;
      if (line.startsWith("promise claimed but")) return; // said by the iteration's "promise ignored" line
      if (line === "paused") return; // said by the paused event, with how to go on
      if (line.startsWith("the agent asks:") || line.startsWith("still waiting for a person")) return; // said by the needs_human event
      // Log lines quote the agent (its reasons, its output's tail): shown, never obeyed.
      print(pc.dim(visible(line)));
    },
  };
}

function endingLines(event: RunEvent, iterations: number, maxIterations: number): string[] {
  const reason = String(event.reason);
  const lines = [visible(`${reason}: ${String(event.detail ?? "")}`)];
  if (isExitReason(reason)) {
    const step = nextStep({
      reason,
      runId: event.run,
      iterations,
      maxIterations,
      detail: typeof event.detail === "string" ? event.detail : undefined,
    });
    if (step) lines.push(`next: ${step}`);
  }
  return lines;
}

/** What the closing summary shows besides the result. */
export interface SummaryView {
  /** The project goes away after the run: no run directory or next step to point at. */
  temporary?: boolean;
  /** The run's agent (the demo agent's figures are pretend). */
  agent?: string;
  /** `--dry-run`: the summary says so, and gives no advice to go on. */
  dryRun?: boolean;
  /** What the run spent, from the spend ledger. */
  spend: SpendTotals;
  maxIterations: number;
  /** A `--parallel` parent: it counts child runs, not iterations. */
  parallel?: boolean;
}

/** The closing lines of a run: how it ended, what it cost, and what to do next. */
export function summaryLines(result: RunResult, view: SummaryView): string[] {
  const colour = result.exitCode === 0 ? pc.green : result.reason === "INTERRUPTED" ? pc.yellow : pc.red;
  const demo = view.agent === "demo";
  const known = view.spend.cost_usd !== null;
  const spend = demo
    ? known
      ? `${costText(view.spend)} (the demo agent's pretend figure: nothing was spent)`
      : view.spend.calls > 0
        ? "nothing spent (the demo agent is free)"
        : "nothing spent"
    : costText(view.spend);
  const tokens = view.spend.calls > 0 ? `, tokens ${tokensText(view.spend.tokens)}` : "";
  const step = nextStep({
    reason: result.reason,
    runId: result.runId,
    iterations: result.iterations,
    maxIterations: view.maxIterations,
    agentMissing: result.agentMissing,
    dryRun: view.dryRun,
    detail: result.detail,
  });
  return [
    colour(
      visible(`${result.reason}: ${result.detail}${view.dryRun && result.reason !== "DRY_RUN" ? " (dry run)" : ""}`),
    ),
    `${result.iterations} ${view.parallel ? "child run" : "iteration"}${result.iterations === 1 ? "" : "s"}, ${spend}${tokens}, exit code ${result.exitCode}`,
    ...(view.temporary ? [] : [`run directory: ${result.runDir}`, ...(step ? [`next: ${step}`] : [])]),
  ];
}
