// Who may talk to the dashboard: the token (query once, then a cookie), the Host header, and for a POST
// the page's CSRF token and the same origin.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The secrets and names one dashboard checks requests against. */
export interface Guard {
  token: string;
  csrf: string;
  cookieName: string;
  hosts: Set<string>;
}

/** What a request may do: proceed, proceed after the token cookie is set, or be refused with a status. */
export type Verdict = { kind: "ok" } | { kind: "set-cookie" } | { kind: "refused"; status: number; message: string };

/** A guard with fresh random secrets; it refuses everything until `bindGuard` names its port and hosts. */
export function createGuard(): Guard {
  return {
    token: randomBytes(24).toString("base64url"),
    csrf: randomBytes(24).toString("base64url"),
    cookieName: "ralph_ui",
    hosts: new Set(),
  };
}

/** Once listening: the port (in the cookie's name) and the host:port names the Host header may carry. */
export function bindGuard(guard: Guard, port: number, hosts: string[]): void {
  // Cookies ignore ports: one name per port keeps two dashboards on one host apart.
  guard.cookieName = `ralph_ui_${port}`;
  guard.hosts = new Set(hosts.map((host) => host.toLowerCase()));
}

function same(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The verdict on `req`, whose URL is already parsed as `url`. */
export function checkRequest(guard: Guard, req: IncomingMessage, url: URL): Verdict {
  const host = (req.headers.host ?? "").toLowerCase();
  // A page on another site can resolve its own name to 127.0.0.1 (DNS rebinding); its requests carry its Host.
  if (!guard.hosts.has(host))
    return { kind: "refused", status: 421, message: `Host ${host || "(none)"} is not this dashboard` };
  const fromCookie = same(cookie(req, guard.cookieName), guard.token);
  const fromQuery = same(url.searchParams.get("token") ?? undefined, guard.token);
  if (!fromCookie && !fromQuery)
    return { kind: "refused", status: 401, message: "missing or wrong token: open the URL ralph ui printed" };
  if (req.method === "POST") {
    const origin = req.headers.origin;
    if (origin !== `http://${host}`) return { kind: "refused", status: 403, message: "cross-origin request refused" };
    const site = req.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin")
      return { kind: "refused", status: 403, message: "cross-site request refused" };
    const csrf = req.headers["x-ralph-csrf"];
    if (!same(typeof csrf === "string" ? csrf : undefined, guard.csrf))
      return { kind: "refused", status: 403, message: "missing or wrong CSRF token" };
    return { kind: "ok" };
  }
  if (req.method !== "GET" && req.method !== "HEAD")
    return { kind: "refused", status: 405, message: `${req.method ?? "?"} not allowed` };
  return fromQuery && !fromCookie ? { kind: "set-cookie" } : { kind: "ok" };
}

/** The Set-Cookie header value that keeps the token for later requests. */
export function tokenCookie(guard: Guard): string {
  return `${guard.cookieName}=${guard.token}; HttpOnly; SameSite=Strict; Path=/`;
}
