// Sends run events to the configured targets in the background; the run never waits for or fails on them.
import { resolve } from "node:path";
import { Redactor } from "../redact/redactor.js";
import { desktopCommand } from "./desktop-command.js";
import { eventSummary, eventTitle } from "./event-summary.js";
import { targetWants, type NotifyEvent, type NotifyTarget } from "./notify-target.js";
import { postWebhook, WEBHOOK_TIMING, type DeliveryResult, type WebhookTiming } from "./post-webhook.js";
import { redactUrl, redactUrlsIn } from "./redact-url.js";
import { COMMAND_LIMITS, runNotifyCommand, type CommandLimits } from "./run-notify-command.js";
import type { SpawnTree } from "../process/run-supervised.js";
import { leadingWords, pinBroken, pinProgram, type PinnedProgram, type PinTable } from "../store/pinned-program.js";

/** The fields of a `notification_failed` event (the caller adds v, ts, run and type). */
export interface NotificationFailure {
  /** The target, secrets redacted: `webhook https://hooks.slack.com/services/[REDACTED]`, `command notify.sh`, `desktop`. */
  target: string;
  /** The type of the event that was not delivered. */
  event: string;
  /** Why, in one line, secrets redacted. */
  error: string;
  /** Tries made (webhooks try up to 3 times). */
  attempts: number;
}

/** How a Notifier is built; everything but onFailure has a default. */
export interface NotifierOptions {
  /** Hears each failed delivery; called at most once per target and event, never throws into the notifier. */
  onFailure: (failure: NotificationFailure) => void;
  /** Hears each delivered notification (for logs and tests). */
  onDelivered?: (delivery: { target: string; event: string; attempts: number }) => void;
  /** Environment of notification commands, and whose credential values are redacted (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Working directory of notification commands (default process.cwd()). */
  cwd?: string;
  /** The scripts under `cwd` pinned when the run was created (its record's); a script not in it is pinned now. */
  pins?: PinTable;
  webhook?: WebhookTiming;
  command?: CommandLimits;
  /** Starts each command's tree (the run's supervision: a cgroup of its own); tree mode when absent. */
  spawn?: SpawnTree;
  /** Which desktop notifier to look for (default process.platform). */
  platform?: NodeJS.Platform;
}

/** What drain() saw. */
export interface DrainReport {
  /** Deliveries that finished (delivered or failed) within the time. */
  settled: number;
  /** Deliveries still running at the deadline: aborted, their command trees ended, reported as failures. */
  abandoned: number;
}

/** How long drain() waits, after its deadline, for abandoned deliveries to end their trees (SIGKILL at once) and report. */
const ABANDON_WAIT_MS = 1000;

/** A target as shown in logs: secrets in URLs and arguments redacted. */
export function describeTarget(target: NotifyTarget, redactor: Redactor): string {
  switch (target.kind) {
    case "webhook":
      return redactor.text(`webhook ${redactUrl(target.url)}`);
    case "command":
      return redactor.text(
        `command ${redactUrlsIn(target.command)}${target.dir === undefined ? "" : ` (in ${target.dir})`}`,
      );
    case "desktop":
      return "desktop";
    default: {
      const never: never = target;
      return never;
    }
  }
}

/** Delivers events to targets; notify() returns at once, drain() awaits what is in flight up to a bound. */
export class Notifier {
  private readonly inFlight = new Set<Promise<void>>();
  private abandon = new AbortController();
  private readonly redactor: Redactor;
  private readonly env: NodeJS.ProcessEnv;
  private readonly pins = new Map<NotifyTarget, PinnedProgram | null>();

  constructor(
    private readonly targets: readonly NotifyTarget[],
    private readonly options: NotifierOptions,
  ) {
    this.env = options.env ?? process.env;
    this.redactor = new Redactor(this.env);
    // A script a command target runs from the project is pinned as the run's record has it (else read now):
    // the agent may rewrite it later.
    const cwd = options.cwd ?? process.cwd();
    for (const target of targets)
      if (target.kind === "command")
        this.pins.set(target, pinProgram(leadingWords(target.command), commandDir(cwd, target), cwd, options.pins));
  }

  /** Starts delivering `event` to every target that wants it; never throws, never waits. */
  notify(event: NotifyEvent): void {
    try {
      // Most events (an agent's output, line by line) interest no target: they cost only the filter.
      const wanting = this.targets.filter((target) => targetWants(target, event));
      if (wanting.length === 0) return;
      const payload = JSON.stringify(event);
      for (const target of wanting) {
        const delivery = this.deliver(target, event, payload).catch(() => undefined);
        this.inFlight.add(delivery);
        void delivery.finally(() => this.inFlight.delete(delivery));
      }
    } catch {
      // An event that cannot be serialised (a cycle, a BigInt) is not worth failing the run for.
    }
  }

  /**
   * Waits up to `timeoutMs` for deliveries in flight, then abandons the rest (reported as failures; at most 1 s
   * more). When `hurry` aborts meanwhile (a signal), the wait ends within `hurry.withinMs` instead.
   */
  async drain(timeoutMs: number, hurry?: { signal: AbortSignal; withinMs: number }): Promise<DrainReport> {
    const pending = [...this.inFlight];
    if (pending.length === 0) return { settled: 0, abandoned: 0 };
    const timers: NodeJS.Timeout[] = [];
    let onHurry = (): void => undefined;
    const deadline = new Promise<void>((resolve) => {
      timers.push(setTimeout(resolve, Math.max(0, timeoutMs)));
      onHurry = () => void timers.push(setTimeout(resolve, Math.min(Math.max(0, timeoutMs), hurry?.withinMs ?? 0)));
    });
    if (hurry?.signal.aborted) onHurry();
    else hurry?.signal.addEventListener("abort", onHurry, { once: true });
    await Promise.race([Promise.allSettled(pending), deadline]);
    hurry?.signal.removeEventListener("abort", onHurry);
    for (const timer of timers) clearTimeout(timer);
    const left = pending.filter((delivery) => this.inFlight.has(delivery));
    if (left.length > 0) {
      this.abandon.abort();
      // Events notified after this drain start afresh.
      this.abandon = new AbortController();
      let cap: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(left),
        new Promise<void>((resolve) => (cap = setTimeout(resolve, ABANDON_WAIT_MS))),
      ]);
      clearTimeout(cap);
    }
    return { settled: pending.length - left.length, abandoned: left.length };
  }

  private async deliver(target: NotifyTarget, event: NotifyEvent, payload: string): Promise<void> {
    const result = await this.send(target, event, payload).catch((error: unknown) => ({
      ok: false as const,
      attempts: 1,
      message: String(error),
    }));
    const shown = describeTarget(target, this.redactor);
    try {
      if (result.ok) this.options.onDelivered?.({ target: shown, event: event.type, attempts: result.attempts });
      else
        this.options.onFailure({
          target: shown,
          event: event.type,
          error: this.redactor.text(redactUrlsIn(result.message)),
          attempts: result.attempts,
        });
    } catch {
      // A listener that throws must not turn into an unhandled rejection in the run.
    }
  }

  private send(target: NotifyTarget, event: NotifyEvent, payload: string): Promise<DeliveryResult> {
    const cwd = this.options.cwd ?? process.cwd();
    const limits = this.options.command ?? COMMAND_LIMITS;
    switch (target.kind) {
      case "webhook": {
        const body = target.format === "slack" ? JSON.stringify({ text: eventSummary(event) }) : payload;
        return postWebhook(target.url, body, this.options.webhook ?? WEBHOOK_TIMING, this.abandon.signal);
      }
      case "command": {
        const broken = pinBroken(this.pins.get(target) ?? null);
        if (broken !== null)
          return Promise.resolve({
            ok: false,
            attempts: 0,
            message: `not run: ${broken}; ralph runs only the script as it was then`,
          });
        // A shell command line, like a `command` check; the event is one line of JSON on its stdin.
        return runNotifyCommand(["/bin/sh", "-c", target.command], `${payload}\n`, {
          cwd: commandDir(cwd, target),
          env: this.env,
          limits,
          abort: this.abandon.signal,
          spawn: this.options.spawn,
        });
      }
      case "desktop": {
        const command = desktopCommand(
          eventTitle(event),
          eventSummary(event),
          this.options.platform ?? process.platform,
          this.env,
        );
        if (!command.ok) return Promise.resolve({ ok: false, attempts: 0, message: command.message });
        return runNotifyCommand(command.argv, "", {
          cwd,
          env: this.env,
          limits,
          abort: this.abandon.signal,
          spawn: this.options.spawn,
        });
      }
      default: {
        const never: never = target;
        return never;
      }
    }
  }
}

/** Where a command target runs: the directory it was typed in, or the project. */
export function commandDir(projectDir: string, target: NotifyTarget & { kind: "command" }): string {
  return target.dir === undefined ? projectDir : resolve(projectDir, target.dir);
}
