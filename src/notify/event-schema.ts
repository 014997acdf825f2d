// The event envelope every notification carries (the same object as a line of events.jsonl), as a zod schema.
import { z } from "zod";

const envelope = {
  v: z.literal(1).describe("envelope version"),
  ts: z.string().describe("ISO 8601 time the event was recorded"),
  run: z.string().describe("run id"),
};

const runEnded = z.looseObject({
  ...envelope,
  type: z.literal("run_ended"),
  reason: z.string().describe("exit reason, e.g. DONE, MAX_ITERATIONS, STALLED (a STALLED ending also matches the `stalled` filter)"),
  exit_code: z.number().int(),
  detail: z.string().optional(),
});

const waitingLimit = z.looseObject({
  ...envelope,
  type: z.literal("waiting_limit"),
  iteration: z.number().int(),
  message: z.string(),
  reset_at: z.string().nullable().describe("when the provider said the limit resets, if it did"),
  resume_at: z.string().describe("when the run tries again"),
});

const needsHuman = z.looseObject({
  ...envelope,
  type: z.literal("needs_human"),
  question: z.string().describe("the agent's <ask> text"),
});

const notificationFailed = z.looseObject({
  ...envelope,
  type: z.literal("notification_failed"),
  target: z.string().describe("the target with URL secrets redacted"),
  event: z.string().describe("type of the event that was not delivered"),
  error: z.string(),
  attempts: z.number().int(),
});

const other = z.looseObject({
  ...envelope,
  type: z.enum([
    "run_started",
    "iteration_started",
    "agent_event",
    "iteration_ended",
    "paused",
    "resumed",
    "criteria_checked",
    "state_change_rejected",
    "state_set",
    "answered",
    "agent_lingered",
    "child_started",
    "child_ended",
  ]),
});

/** One event of the stream as a notification command reads it on stdin and a json webhook receives it. */
export const runEventSchema = z.discriminatedUnion("type", [runEnded, waitingLimit, needsHuman, notificationFailed, other]);

/** An event as the schema describes it. */
export type RunEventEnvelope = z.infer<typeof runEventSchema>;
