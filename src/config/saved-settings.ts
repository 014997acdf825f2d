// settings.json in a run directory: the resolved settings a run was started with, read back by `ralph continue`.
import { z } from "zod";
import { AGENT_NAMES } from "../agents/types.js";
import { shellCommandLine } from "../util/shell-words.js";
import { NOTIFY_EVENT_NAMES } from "../notify/notify-target.js";
import { defaultSettings, FALLBACK_AGENT_NAMES, type RunSettings } from "./run-options.js";

const count = z.number().int().nonnegative();
const ms = z.number().int().nonnegative();
const positiveMs = z.number().int().positive();
const text = z.string().min(1);

const events = z.array(z.enum(NOTIFY_EVENT_NAMES)).min(1);
// A run saved before notification commands became shell lines kept them as words: read back as the same line.
const legacyCommand = z
  .strictObject({ kind: z.literal("command"), argv: z.array(z.string()).min(1), events })
  .transform(({ argv, events }) => ({ kind: "command" as const, command: shellCommandLine(argv), events }));
const notifyTarget = z.union([
  z.strictObject({ kind: z.literal("command"), command: text, events, dir: text.optional() }),
  legacyCommand,
  z.strictObject({
    kind: z.literal("webhook"),
    url: z.url({ protocol: /^https?$/ }),
    format: z.enum(["json", "slack"]),
    events,
  }),
  z.strictObject({ kind: z.literal("desktop"), events }),
]);

// Every setting must be listed (the `satisfies` makes a new one a compile error until it is).
const fields = {
  promptFile: text.nullable(),
  maxIterations: count,
  completionPromise: text.nullable(),
  checks: z.array(text),
  tasks: text.nullable(),
  agent: z.enum(AGENT_NAMES),
  agentCmd: z.array(z.string()).min(1).nullable(),
  agentArgs: z.array(z.string()),
  model: text.nullable(),
  timeoutMs: positiveMs,
  idleTimeoutMs: positiveMs.nullable(),
  graceMs: ms,
  maxCostUsd: z.number().nonnegative().nullable(),
  maxTokens: z
    .strictObject({
      total: count.optional(),
      input: count.optional(),
      output: count.optional(),
      cache_read: count.optional(),
      cache_write: count.optional(),
    })
    .nullable(),
  maxRuntimeMs: positiveMs.nullable(),
  maxFailures: count,
  stallLimit: count,
  sameFailureLimit: count,
  onBillingError: z.enum(["fail", "wait"]),
  preflight: z.enum(["on", "off"]),
  onLimit: z.enum(["wait", "stop"]),
  onAsk: z.enum(["wait", "continue"]),
  live: z.boolean(),
  dryRun: z.boolean(),
  dryRunDelayMs: ms,
  json: z.boolean(),
  name: text.nullable(),
  memoryMax: z.number().int().positive().nullable(),
  pidsMax: z.number().int().positive().nullable(),
  lingerMs: positiveMs,
  fallbackAgents: z.array(z.enum(FALLBACK_AGENT_NAMES)),
  maxWaitMs: ms,
  notifyTargets: z.array(notifyTarget),
  worktree: z.boolean(),
  commit: z.enum(["iteration", "off"]).nullable(),
  parallel: z.number().int().positive().nullable(),
  task: text.nullable(),
  taskIndex: z.union([count, z.literal("job")]).nullable(),
  parent: text.nullable(),
  sandbox: z.strictObject({
    mode: z.enum(["on", "off", "auto"]),
    network: z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("default") }),
      z.strictObject({ kind: z.literal("none") }),
      z.strictObject({ kind: z.literal("allow"), hosts: z.array(text) }),
    ]),
    readDeny: z.array(text),
    writeAllow: z.array(text),
    env: z.array(text).nullable(),
  }),
  maxResolve: count,
  resolve: z.boolean(),
} satisfies { [K in keyof RunSettings]-?: z.ZodType<RunSettings[K]> };

// A file written by an older ralph may lack newer settings: their defaults apply.
const savedSettingsSchema = z.object(fields).partial();

/** Parses settings.json; a value that is not what `ralph run` would have written gives a message naming it. */
export function parseSavedSettings(
  json: string,
  file: string,
): { ok: true; settings: RunSettings } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, message: `${file}: is not valid JSON` };
  }
  const parsed = savedSettingsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    return { ok: false, message: `${file}: ${where}${issue?.message ?? "not valid"}` };
  }
  const given = Object.fromEntries(
    Object.entries(parsed.data).filter(([, v]) => v !== undefined),
  ) as Partial<RunSettings>;
  return { ok: true, settings: { ...defaultSettings(), ...given } };
}
