// Responses with the dashboard's security headers: JSON, text, files and server-sent event streams.
import type { ServerResponse } from "node:http";

/** Headers every response carries: no inline script, no framing, no referrer, no sniffing, no caching. */
const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store",
};

/** Sends `body` with `status` and content type `type`. */
export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
    ...extra,
  });
  res.end(body);
}

/** Sends `value` as JSON. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value));
}

/** Sends a one-line plain-text message (refusals and errors). */
export function sendText(res: ServerResponse, status: number, message: string): void {
  send(res, status, "text/plain; charset=utf-8", `${message}\n`);
}

/** Opens a server-sent event stream; the returned function sends one event, and is a no-op once closed. */
export function openEventStream(res: ServerResponse): (event: string, data: unknown) => void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "Content-Type": "text/event-stream; charset=utf-8",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  });
  res.write(": ralph\n\n");
  // A comment now and then lets both ends notice a connection that died quietly.
  const keepAlive = setInterval(() => res.write(": ping\n\n"), 15_000);
  res.on("close", () => clearInterval(keepAlive));
  return (event, data) => {
    if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
}
