// A run's iterations gathered from its events: start, end, outcome, cost, criteria verdicts, resources.
import { money } from "./common.js";

/** The first numeric field of `event` among `names` (resource fields are written only with a cgroup). */
function firstNumber(event, names) {
  for (const name of names) if (typeof event[name] === "number") return event[name];
  return null;
}

/** Iterations by number, updated event by event. */
export class Iterations {
  constructor() {
    this.byNumber = new Map();
    this.question = null;
  }

  at(number) {
    if (!this.byNumber.has(number))
      this.byNumber.set(number, { iteration: number, outcome: "running", criteria: [], reviews: [] });
    return this.byNumber.get(number);
  }

  /** Takes one charted event (not agent output). */
  add(event) {
    const n = typeof event.iteration === "number" ? event.iteration : null;
    switch (event.type) {
      case "iteration_started":
        if (n !== null) this.at(n).startedAt = event.ts;
        break;
      case "iteration_ended":
        if (n === null) break;
        Object.assign(this.at(n), {
          outcome: event.result ?? "ended",
          durationMs: event.duration_ms ?? null,
          costUsd: event.cost_usd ?? null,
          totalUsd:
            typeof event.cost_total_usd === "number"
              ? event.cost_total_usd
              : Number(event.cost_total_usd ?? NaN) || null,
          error: event.error ?? null,
          // The runner writes what a cgroup counted under `resources`.
          cpuSeconds: firstNumber(event.resources ?? {}, ["cpu_seconds"]) ?? NaN,
          memoryBytes: firstNumber(event.resources ?? {}, ["peak_memory_bytes"]),
          pids: firstNumber(event.resources ?? {}, ["peak_pids"]),
        });
        break;
      case "criteria_checked":
        // A review is shown by its review_verdict, which says more than pass or fail.
        if (n !== null && event.criterion !== "review")
          this.at(n).criteria.push({ name: event.check ?? event.criterion, passed: event.passed === true });
        break;
      case "review_verdict":
        if (n !== null)
          this.at(n).reviews.push({
            reviewer: String(event.reviewer ?? "review"),
            verdict: String(event.verdict ?? "none"),
            reason: event.reason ?? null,
            findings: String(event.findings ?? ""),
          });
        break;
      case "needs_human":
        this.question = typeof event.question === "string" ? event.question : "(the agent asked a question)";
        break;
      case "answered":
      case "run_ended":
        this.question = null;
        break;
      default:
        break;
    }
  }

  list() {
    return [...this.byNumber.values()].sort((a, b) => a.iteration - b.iteration);
  }
}

/** Bytes as the CLI's live line shows them: `8.9 MiB`. */
export const mebibytes = (bytes) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** The tooltip and table text of one iteration. */
export function describeIteration(it) {
  const parts = [`iteration ${it.iteration}: ${it.outcome}`];
  if (it.durationMs != null) parts.push(`${(it.durationMs / 1000).toFixed(1)}s`);
  if (it.costUsd != null) parts.push(money(it.costUsd));
  if (it.criteria.length) parts.push(it.criteria.map((c) => `${c.name}: ${c.passed ? "pass" : "fail"}`).join(", "));
  for (const review of it.reviews) parts.push(reviewText(review));
  if (Number.isFinite(it.cpuSeconds)) parts.push(`CPU ${it.cpuSeconds.toFixed(1)}s`);
  if (it.memoryBytes != null) parts.push(`memory ${mebibytes(it.memoryBytes)}`);
  return parts.join(" · ");
}

/** One review as the timeline and the table show it: `review approve`, `review changes: first finding`, `review: no verdict (why)`. */
export function reviewText(review) {
  if (review.verdict === "approve") return `review approve (${review.reviewer})`;
  if (review.verdict === "changes") {
    const first =
      review.findings
        .split("\n")
        .find((line) => line.trim() !== "")
        ?.trim() ?? "";
    return `review changes (${review.reviewer})${first ? `: ${first.slice(0, 160)}` : ""}`;
  }
  return `review: no verdict (${review.reason ?? "none"})`;
}
