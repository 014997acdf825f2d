// Notification targets from ralph.yaml `notify:` entries and from --notify / --webhook / --webhook-format.
import { spawnSync } from "node:child_process";
import { z } from "zod";
import type { YamlDefaults } from "../config/ralph-yaml.js";
import {
  DEFAULT_NOTIFY_EVENTS,
  NOTIFY_EVENT_NAMES,
  type NotifyEventName,
  type NotifyTarget,
  type WebhookFormat,
} from "./notify-target.js";
import { redactUrlsIn } from "./redact-url.js";

/** The ralph.yaml key holding notification entries. */
export const NOTIFY_YAML_KEY = "notify";

/** Targets, or one line naming the bad input and what was expected. */
export type TargetsResult = { ok: true; targets: NotifyTarget[] } | { ok: false; message: string };

const FORMATS = ["json", "slack"] as const;

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

const eventList = NOTIFY_EVENT_NAMES.join(", ");
const events = z
  .array(z.enum(NOTIFY_EVENT_NAMES, { error: `one of ${eventList}` }), {
    error: `a list of event names (${eventList})`,
  })
  .min(1, "at least one event name");
const entry = z.union([
  z.strictObject({
    command: z.string({ error: "a command line" }).trim().min(1, "a command line"),
    events: events.optional(),
  }),
  z.strictObject({
    webhook: z.string({ error: "an http(s) URL" }).refine(isHttpUrl, "an http(s) URL"),
    format: z.enum(FORMATS, { error: "json or slack" }).optional(),
    events: events.optional(),
  }),
  z.strictObject({ desktop: z.literal(true, { error: "true" }), events: events.optional() }),
]);

/** Why `sh` cannot parse `line` (`sh -n` reads it, runs nothing), or null when it can. */
function shellSyntaxError(line: string): string | null {
  const checked = spawnSync("/bin/sh", ["-n", "-c", line], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 5000,
  });
  if (checked.status === 0 || checked.error) return null;
  const said =
    (checked.stderr || "")
      .trim()
      .split("\n")[0]
      ?.replace(/^[^:]*sh: (\d+: )?/, "") ?? "";
  return `expected a shell command line (run with sh -c): ${said || "sh cannot parse it"}`;
}

function shown(value: unknown): string {
  // Redacted before it is shortened, so a cut never leaves half a secret unrecognised.
  const text = redactUrlsIn(JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Which of the three shapes an entry means to be, by its first known key. */
function entryKinds(item: unknown): Array<"command" | "webhook" | "desktop"> {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return [];
  return (["command", "webhook", "desktop"] as const).filter((key) => key in item);
}

/** The first problem of one entry, as "notify[i].key: expected …, got …". */
function entryProblem(item: unknown, index: number): string {
  const [kind, ...more] = entryKinds(item);
  const at = `${NOTIFY_YAML_KEY}[${index}]`;
  if (more.length > 0)
    return `${at}: expected one of command, webhook or desktop per entry, got ${[kind, ...more].join(" and ")}`;
  if (kind === undefined)
    return `${at}: expected a mapping with one of command, webhook or desktop, got ${shown(item)}`;
  const shape = entry.options.find((option) => kind in option.shape);
  const result = shape?.safeParse(item);
  const issue = result && !result.success ? result.error.issues[0] : undefined;
  if (!issue) return `${at}: expected a ${kind} entry, got ${shown(item)}`;
  const key = issue.path.map((part) => (typeof part === "number" ? `[${part}]` : `.${String(part)}`)).join("");
  if (issue.code === "unrecognized_keys") {
    const allowed = Object.keys(shape?.shape ?? {}).join(", ");
    return `${at}: unknown key "${issue.keys[0]}" in a ${kind} entry (expected ${allowed})`;
  }
  const value = issue.path.reduce<unknown>(
    (value, part) => (value as Record<PropertyKey, unknown> | undefined)?.[part as PropertyKey],
    item,
  );
  return `${at}${key}: expected ${issue.message}, got ${shown(value)}`;
}

/** Targets from the raw `notify:` value of ralph.yaml; `where` is "FILE: line N" of the key. */
export function notifyTargetsFromYaml(raw: unknown, where: string): TargetsResult {
  if (!Array.isArray(raw))
    return {
      ok: false,
      message: `${where}: ${NOTIFY_YAML_KEY}: expected a list of entries (- command: CMD, - webhook: URL, - desktop: true), got ${shown(raw)}`,
    };
  const targets: NotifyTarget[] = [];
  for (const [index, item] of raw.entries()) {
    const parsed = entry.safeParse(item);
    if (!parsed.success) return { ok: false, message: `${where}: ${entryProblem(item, index)}` };
    const value = parsed.data;
    const wanted = value.events ?? DEFAULT_NOTIFY_EVENTS;
    if ("command" in value) {
      const syntax = shellSyntaxError(value.command);
      if (syntax !== null) return { ok: false, message: `${where}: ${NOTIFY_YAML_KEY}[${index}].command: ${syntax}` };
      targets.push({ kind: "command", command: value.command, events: wanted });
    } else if ("webhook" in value)
      targets.push({ kind: "webhook", url: value.webhook, format: value.format ?? "json", events: wanted });
    else targets.push({ kind: "desktop", events: wanted });
  }
  return { ok: true, targets };
}

/** Targets from the `notify:` key of a loaded ralph.yaml (none when the key is absent). */
export function notifyTargetsFromRalphYaml(yaml: YamlDefaults): TargetsResult {
  const entry = yaml.values.get(NOTIFY_YAML_KEY);
  return entry === undefined
    ? { ok: true, targets: [] }
    : notifyTargetsFromYaml(entry.value, `${yaml.file}: line ${entry.line}`);
}

/** The notification flags as given: --notify and --webhook repeatable, --webhook-format once. */
export interface NotifyFlags {
  notify?: readonly string[];
  webhook?: readonly string[];
  webhookFormat?: string;
  /** `--notify-events a,b`: the events every flag target hears instead of the default ones. */
  notifyEvents?: string;
}

/** The `--notify-events` list, or one line naming what was expected. */
function flagEvents(
  raw: string | undefined,
  given: boolean,
): { ok: true; events: readonly NotifyEventName[] } | { ok: false; message: string } {
  if (raw === undefined) return { ok: true, events: DEFAULT_NOTIFY_EVENTS };
  if (!given) return { ok: false, message: "--notify-events: expected alongside --notify CMD or --webhook URL" };
  const names = raw.split(",").map((name) => name.trim());
  const parsed = events.safeParse(names);
  return parsed.success
    ? { ok: true, events: parsed.data }
    : { ok: false, message: `--notify-events: expected a comma-separated list of ${eventList}, got ${shown(raw)}` };
}

/** Targets from the flags (the default events each, or --notify-events); `--notify desktop` is the desktop target. */
export function notifyTargetsFromFlags(flags: NotifyFlags): TargetsResult {
  const format = flags.webhookFormat ?? "json";
  if (!(FORMATS as readonly string[]).includes(format))
    return { ok: false, message: `--webhook-format: expected json or slack, got ${shown(format)}` };
  if (flags.webhookFormat !== undefined && (flags.webhook ?? []).length === 0)
    return { ok: false, message: "--webhook-format: expected alongside --webhook URL" };
  const targets: NotifyTarget[] = [];
  for (const command of flags.notify ?? []) {
    if (command.trim() === "desktop") {
      targets.push({ kind: "desktop", events: DEFAULT_NOTIFY_EVENTS });
      continue;
    }
    if (command.trim() === "")
      return { ok: false, message: `--notify: expected a command line or "desktop", got ${shown(command)}` };
    const syntax = shellSyntaxError(command);
    if (syntax !== null) return { ok: false, message: `--notify: ${syntax}` };
    targets.push({ kind: "command", command, events: DEFAULT_NOTIFY_EVENTS });
  }
  for (const url of flags.webhook ?? []) {
    if (!isHttpUrl(url)) return { ok: false, message: `--webhook: expected an http(s) URL, got ${shown(url)}` };
    targets.push({ kind: "webhook", url, format: format as WebhookFormat, events: DEFAULT_NOTIFY_EVENTS });
  }
  const wanted = flagEvents(flags.notifyEvents, targets.length > 0);
  if (!wanted.ok) return wanted;
  return { ok: true, targets: targets.map((target) => ({ ...target, events: wanted.events })) };
}
