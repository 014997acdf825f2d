// One readable line per event, for Slack messages and desktop notifications.
import { clip } from "../util/clip.js";
import type { NotifyEvent } from "./notify-target.js";
import { costText, tokenFigures, tokensText } from "../spend/spend-totals.js";

const MAX_SUMMARY = 300;

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.replace(/\s+/g, " ").trim() : null;
}

/** A one-line, human summary of `event`, e.g. "ralph run 20260101-abc: ended DONE (exit 0): all criteria passed". */
export function eventSummary(event: NotifyEvent): string {
  const run = `ralph run ${text(event.run) ?? "?"}`;
  const detail = (value: unknown): string => {
    const shown = text(value);
    return shown === null ? "" : `: ${shown}`;
  };
  switch (event.type) {
    case "run_ended": {
      const reason = text(event.reason) ?? "unknown reason";
      const code = typeof event.exit_code === "number" ? ` (exit ${event.exit_code})` : "";
      // The spend as every view words it (src/spend/spend-totals.ts); it comes first so that clipping keeps it.
      const spend = spendOfEvent(event.spend);
      return clip(`${run}: ended ${reason}${code}${spend}${detail(event.detail)}`, MAX_SUMMARY);
    }
    case "waiting_limit":
      // A spent budget waited out (budget.on_exhausted: wait) is worded as what it is, not as a provider's limit.
      if (event.budget === true)
        return clip(
          `${run}: budget spent, waiting until ${text(event.resume_at) ?? "the next day"}${detail(event.message)}`,
          MAX_SUMMARY,
        );
      return clip(
        `${run}: usage limit reached, waiting until ${text(event.resume_at) ?? "the reset"}${detail(event.message)}`,
        MAX_SUMMARY,
      );
    case "needs_human":
      return clip(`${run} needs a person${detail(event.question)}`, MAX_SUMMARY);
    case "agent_lingered":
      return clip(`${run}: the agent did not exit after its result and was ended`, MAX_SUMMARY);
    case "review_verdict": {
      const verdict =
        event.verdict === "approve"
          ? "approved"
          : event.verdict === "changes"
            ? "changes asked for"
            : `no verdict${detail(event.reason)}`;
      return clip(
        `${run}: review of iteration ${typeof event.iteration === "number" ? event.iteration : "?"} by ${text(event.reviewer) ?? "a reviewer"}: ${verdict}`,
        MAX_SUMMARY,
      );
    }
    case "iteration_ended":
      return clip(
        `${run}: iteration ${typeof event.iteration === "number" ? event.iteration : "?"} ended${detail(event.outcome)}`,
        MAX_SUMMARY,
      );
    default:
      return clip(`${run}: ${event.type.replace(/_/g, " ")}`, MAX_SUMMARY);
  }
}

/** ` · $0.0400 · tokens in … total …` from a run_ended event's spend, or nothing when it has none. */
function spendOfEvent(value: unknown): string {
  const spend = value as { cost_usd?: unknown; cost_source?: unknown; tokens?: unknown } | undefined;
  const tokens = tokenFigures(spend?.tokens);
  if (!spend || !tokens) return "";
  const cost = typeof spend.cost_usd === "number" ? spend.cost_usd : null;
  const source =
    spend.cost_source === "computed" || spend.cost_source === "mixed" || spend.cost_source === "reported"
      ? spend.cost_source
      : "none";
  return ` · ${costText({ cost_usd: cost, cost_source: source })} · tokens ${tokensText(tokens)}`;
}

/** A short title for a desktop notification. */
export function eventTitle(event: NotifyEvent): string {
  if (event.type === "run_ended") return `ralph: ${text(event.reason) ?? "ended"}`;
  if (event.type === "needs_human") return "ralph: needs a person";
  if (event.type === "waiting_limit")
    return event.budget === true ? "ralph: waiting for the budget" : "ralph: waiting for a usage limit";
  return `ralph: ${event.type.replace(/_/g, " ")}`;
}
