// `ralph ui`: serves the dashboard of one or more projects until Ctrl-C.
import { existsSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { hostname, networkInterfaces } from "node:os";
import { parseCount } from "../../util/parse-value.js";
import { bindGuard, createGuard } from "../../ui/guard.js";
import { projectsOf } from "../../ui/projects.js";
import { createDashboard } from "../../ui/server.js";
import { UsageError } from "../usage-error.js";

/** Options of `ralph ui`. */
export interface UiOptions {
  port?: string;
  host?: string;
  project?: string[];
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** The host:port names a browser may send in Host for a server bound to `host`. */
function allowedHosts(host: string, port: number): string[] {
  const names = LOOPBACK.has(host) ? ["127.0.0.1", "localhost", "[::1]"] : [host.includes(":") ? `[${host}]` : host];
  if (host === "0.0.0.0" || host === "::") {
    names.push(hostname(), "127.0.0.1", "localhost", "[::1]");
    for (const list of Object.values(networkInterfaces()))
      for (const net of list ?? []) names.push(net.family === "IPv6" ? `[${net.address}]` : net.address);
  }
  return names.map((name) => `${name}:${port}`);
}

/** `ralph ui [--port N] [--host H] [--project DIR]...`; resolves when stopped by SIGINT or SIGTERM. */
export async function uiCommand(cwd: string, opts: UiOptions): Promise<number> {
  const port = opts.port === undefined ? { ok: true as const, value: 0 } : parseCount(opts.port);
  if (!port.ok || port.value > 65535)
    throw new UsageError(
      `--port: expected a port number (0 to 65535, 0 = any free port), got ${JSON.stringify(opts.port)}`,
    );
  const host = opts.host ?? "127.0.0.1";
  const dirs = opts.project && opts.project.length > 0 ? opts.project : [cwd];
  for (const dir of dirs) {
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new UsageError(`--project ${dir}: expected a project directory`);
  }
  const projects = projectsOf(dirs);
  const bound = await new Promise<{ close: () => Promise<void>; port: number; token: string }>((resolve, reject) => {
    const guard = createGuard();
    const dashboard = createDashboard(projects, guard);
    dashboard.server.once("error", (error: NodeJS.ErrnoException) => {
      void dashboard.close();
      reject(new UsageError(`--host ${host} --port ${port.value}: cannot listen (${error.code ?? error.message})`));
    });
    dashboard.server.listen(port.value, host, () => {
      const actual = (dashboard.server.address() as AddressInfo).port;
      bindGuard(guard, actual, allowedHosts(host, actual));
      resolve({ close: dashboard.close, port: actual, token: guard.token });
    });
  });
  if (!LOOPBACK.has(host)) {
    process.stderr.write(
      `ralph: warning: --host ${host} serves the dashboard beyond this machine; anyone who gets the URL can stop and continue runs\n`,
    );
  }
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  process.stdout.write(`ralph ui: ${projects.length === 1 ? projects[0]?.dir : `${projects.length} projects`}\n`);
  process.stdout.write(`http://${shown}:${bound.port}/?token=${bound.token}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await bound.close();
  return 0;
}
