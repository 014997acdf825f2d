// The sandbox's only way out: an HTTP proxy on a unix socket (bound into the sandbox) that lets through
// CONNECT tunnels and plain HTTP requests to allowed host[:port] patterns only, and reports the rest.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A connection the allowlist refused. */
export interface Denied {
  host: string;
  port: number;
}

/** A running proxy. */
export interface EgressProxy {
  /** The unix socket's path. */
  socket: string;
  close(): Promise<void>;
}

/** Whether host:port matches one `host[:port]` pattern (`*.example.com` matches subdomains; no port: 80 and 443). */
export function hostAllowed(host: string, port: number, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  return patterns.some((pattern) => {
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+|\*))?$/.exec(pattern.toLowerCase());
    if (!match) return false;
    const wantHost = (match[1] ?? "").replace(/^\[|\]$/g, "");
    const wantPort = match[2];
    const portOk =
      wantPort === "*" || (wantPort === undefined ? port === 443 || port === 80 : Number(wantPort) === port);
    const hostOk = wantHost.startsWith("*.") ? name.endsWith(wantHost.slice(1)) : name === wantHost;
    return portOk && hostOk;
  });
}

function splitHostPort(target: string, defaultPort: number): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:/]+)(?::(\d+))?$/.exec(target);
  if (!match) return null;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  return port > 0 && port < 65536 ? { host: (match[1] ?? "").replace(/^\[|\]$/g, ""), port } : null;
}

/** Starts the proxy on a fresh 0700 directory's socket; `onDenied` hears every refused connection. */
export async function startEgressProxy(
  allow: readonly string[],
  onDenied: (denied: Denied) => void,
): Promise<EgressProxy> {
  const dir = mkdtempSync(join(tmpdir(), "ralph-sandbox-"));
  const socket = join(dir, "proxy.sock");
  const tunnels = new Set<Socket>();
  const refuse = (target: Denied, reply: (status: number, text: string) => void): void => {
    onDenied(target);
    reply(403, `ralph sandbox: ${target.host}:${target.port} is not in sandbox.network.allow\n`);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("ralph sandbox: the proxy takes absolute http:// URLs or CONNECT\n");
      return;
    }
    const port = url.port === "" ? 80 : Number(url.port);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (url.protocol !== "http:" || !hostAllowed(host, port, allow)) {
      refuse({ host, port }, (status, text) => res.writeHead(status, { "content-type": "text/plain" }).end(text));
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = request(
      { host, port, method: req.method, path: `${url.pathname}${url.search}`, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) =>
      res.headersSent ? res.destroy() : res.writeHead(502).end(`ralph sandbox: ${error.message}\n`),
    );
    req.pipe(upstream);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = splitHostPort(req.url ?? "", 443);
    client.on("error", () => client.destroy());
    if (target === null || !hostAllowed(target.host, target.port, allow)) {
      refuse(target ?? { host: req.url ?? "?", port: 0 }, (status, text) =>
        client.end(`HTTP/1.1 ${status} Forbidden\r\ncontent-length: ${text.length}\r\n\r\n${text}`),
      );
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.add(client).add(upstream);
    const forget = () => {
      tunnels.delete(client);
      tunnels.delete(upstream);
    };
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    upstream.on("close", () => (client.destroy(), forget()));
    client.on("close", () => (upstream.destroy(), forget()));
  });
  server.on("clientError", (_error, client: Socket) => client.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  server.unref();
  return {
    socket,
    close: async () => {
      for (const open of tunnels) open.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
