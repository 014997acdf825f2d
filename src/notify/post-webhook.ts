// Delivering one event to a webhook: a JSON POST, a bounded time per try, retries on 5xx and connection errors.
import type { IncomingMessage } from "node:http";
import { pause } from "../util/pause.js";
import { requireBuiltin } from "../util/require-builtin.js";

/** How a webhook is tried. */
export interface WebhookTiming {
  /** Time for one try, from connecting to the response status (default 5000 ms). */
  tryMs: number;
  /** Pauses before the second, third… try; its length + 1 is the number of tries (default [1000, 3000]: 3 tries). */
  backoffMs: readonly number[];
}

/** The webhook defaults: 5 s per try, 3 tries. */
export const WEBHOOK_TIMING: WebhookTiming = { tryMs: 5000, backoffMs: [1000, 3000] };

/** The outcome of a delivery; `message` never holds the URL. */
export type DeliveryResult = { ok: true; attempts: number } | { ok: false; attempts: number; message: string };

type TryResult = { kind: "ok" } | { kind: "retry"; message: string } | { kind: "final"; message: string };

/** One POST; never rejects. */
function tryOnce(url: URL, body: string, tryMs: number, abort: AbortSignal): Promise<TryResult> {
  return new Promise((resolve) => {
    // Loaded at the first notification, not with every run (node:https alone is about 6 ms of a start).
    const send = (requireBuiltin(url.protocol === "https:" ? "node:https" : "node:http") as typeof import("node:http"))
      .request;
    let settled = false;
    const finish = (result: TryResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      abort.removeEventListener("abort", onAbort);
      req.destroy();
      resolve(result);
    };
    const req = send(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "user-agent": "ralph-notify",
      },
      // No keep-alive: a notification is one request, and an idle socket must not hold the process open.
      agent: false,
    });
    const timer = setTimeout(() => finish({ kind: "retry", message: `no answer within ${tryMs} ms` }), tryMs);
    const onAbort = (): void => finish({ kind: "final", message: "abandoned: the run was exiting" });
    abort.addEventListener("abort", onAbort, { once: true });
    req.on("response", (res: IncomingMessage) => {
      res.resume();
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) finish({ kind: "ok" });
      else if (status >= 500) finish({ kind: "retry", message: `HTTP ${status}` });
      else
        finish({
          kind: "final",
          message: `HTTP ${status}${status >= 300 && status < 400 ? " (redirects are not followed)" : ""}`,
        });
    });
    req.on("error", (error: NodeJS.ErrnoException) =>
      finish({ kind: "retry", message: `connection failed (${error.code ?? error.message})` }),
    );
    req.end(body);
  });
}

/** POSTs `body` (JSON text) to `url`; retries a 5xx, a timeout or a connection error after each backoff pause. */
export async function postWebhook(
  url: string,
  body: string,
  timing: WebhookTiming,
  abort: AbortSignal,
): Promise<DeliveryResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, attempts: 0, message: "not a valid URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return { ok: false, attempts: 0, message: "not an http(s) URL" };
  const tries = timing.backoffMs.length + 1;
  let last = "";
  for (let attempt = 1; attempt <= tries; attempt++) {
    if (abort.aborted) return { ok: false, attempts: attempt - 1, message: "abandoned: the run was exiting" };
    const result = await tryOnce(parsed, body, timing.tryMs, abort);
    if (result.kind === "ok") return { ok: true, attempts: attempt };
    if (result.kind === "final") return { ok: false, attempts: attempt, message: result.message };
    last = result.message;
    if (attempt < tries) {
      await pause(timing.backoffMs[attempt - 1] ?? 0, abort);
      if (abort.aborted) return { ok: false, attempts: attempt, message: `${last}; abandoned: the run was exiting` };
    }
  }
  return { ok: false, attempts: tries, message: `${last} (after ${tries} tries)` };
}
